# Build and install the C library like any other:
#
#   make                                  # libraries into target/capi
#   make install PREFIX=/usr/local        # DESTDIR=... stages the install
#   make install-strip                    # the same without debug information
#   make uninstall PREFIX=/usr/local
#   make embedded                         # no_std, allocator-free static library
#   make embedded-alloc                   # the same on the program's allocator
#
# LIBDIR and INCLUDEDIR default to $(PREFIX)/lib and $(PREFIX)/include.

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DESTDIR ?=
CARGO ?= cargo

export PREFIX LIBDIR INCLUDEDIR DESTDIR CARGO CC

.PHONY: all lib install install-strip uninstall embedded embedded-alloc

all: lib

lib:
	sh capi/dist/build.sh

install: lib
	sh capi/dist/install.sh

install-strip: lib
	STRIP=1 sh capi/dist/install.sh

uninstall:
	UNINSTALL=1 sh capi/dist/install.sh

embedded:
	sh capi/dist/build.sh embedded

embedded-alloc:
	sh capi/dist/build.sh embedded alloc
