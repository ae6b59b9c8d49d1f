// TANDEM_API marks what libtandem exports: the public API and nothing else (the library is built with
// hidden visibility, so internal symbols stay internal).
#pragma once

#if defined(TANDEM_STATIC)
#define TANDEM_API
#elif defined(_WIN32)
#ifdef TANDEM_BUILDING
#define TANDEM_API __declspec(dllexport)
#else
#define TANDEM_API __declspec(dllimport)
#endif
#else
#define TANDEM_API __attribute__((visibility("default")))
#endif
