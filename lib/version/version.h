/* rankshape's version: the macros for the preprocessor, rankshape_version()
 * for what the library that is loaded says. The project follows semantic
 * versioning; the shared library's SONAME carries the major version
 * (librankshape.so.0), and CHANGELOG.md says what each version changed. */
#ifndef RANKSHAPE_LIB_VERSION_VERSION_H_
#define RANKSHAPE_LIB_VERSION_VERSION_H_

#define RANKSHAPE_VERSION_MAJOR 0
#define RANKSHAPE_VERSION_MINOR 1
#define RANKSHAPE_VERSION_PATCH 0
#define RANKSHAPE_VERSION_STRING "0.1.0"
/* One number that grows with every version: 10000 * major + 100 * minor + patch. */
#define RANKSHAPE_VERSION \
  (RANKSHAPE_VERSION_MAJOR * 10000 + RANKSHAPE_VERSION_MINOR * 100 + RANKSHAPE_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the library in use, e.g. "0.1.0" (it may be newer than
 * the header a program was built with, never older in major). */
const char* rankshape_version(void);

#ifdef __cplusplus
}
#endif

#endif /* RANKSHAPE_LIB_VERSION_VERSION_H_ */
