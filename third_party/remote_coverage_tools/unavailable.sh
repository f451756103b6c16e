#!/bin/sh
echo "coverage tools are not available in rankshape's offline Bazel build" >&2
exit 1
