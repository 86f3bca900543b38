# psbench fix-up, appended by drivers/opensplice/build-sdk to OpenSplice's
# setup/x86_64.linux-release/config.mak (README.md, "Building").
#
# GCC 10 and later compile C with -fno-common: a global defined without `extern` in a
# header then becomes one definition per object file, and the link fails ("multiple
# definition of `ifstack'" in src/cpp, the C preprocessor idlpp uses). OpenSplice 6.9's C
# relies on the old behaviour (-fcommon, GCC 9's default), so ask for it.
CFLAGS_OPT += -fcommon
