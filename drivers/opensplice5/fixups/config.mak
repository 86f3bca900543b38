# psbench fix-up, appended by drivers/opensplice5/build-sdk to OpenSplice 5.5.1's
# setup/x86_64.linux2.6-release/config.mak (README.md, "Building").
#
# GCC 10 and later compile C with -fno-common: globals defined in headers (src/cpp's
# `ifstack', ...) then clash at link time. OpenSplice's C relies on -fcommon, GCC 9's default.
CFLAGS_OPT += -fcommon
