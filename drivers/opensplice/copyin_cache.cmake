# Run by CMakeLists.txt after idlpp (cmake -P, FILE = the generated psbenchSplDcps.c).
#
# idlpp's C copy-in functions cache the database type of each sequence in a static
# variable, resolved once per process in the first domain that writes. A process that
# joins a second domain (another domain id, or the same id after the first was closed:
# the conformance suite's contexts, one run after another) would then allocate its
# samples with a type of another, perhaps freed, database ("Specified type is not an
# array nor a sequence", DDS_RETCODE_OUT_OF_RESOURCES). Here each cache also remembers
# the database it was resolved in and how many domains this process had closed then
# (context.h counts them), and is resolved again when either differs. Only pointers are
# compared: a cached type is never used unless it is of the database written to.
file(READ ${FILE} text)
string(REGEX REPLACE "static c_type (type[0-9]+) = NULL;"
       "static c_type \\1 = NULL; static c_base \\1_base = NULL; static unsigned \\1_closed = 0;"
       text "${text}")
string(REGEX REPLACE "if \\((type[0-9]+) == NULL\\) {"
       "if (\\1 == NULL || \\1_base != base || \\1_closed != psbench_ospl_domains_closed) { \\1_base = base; \\1_closed = psbench_ospl_domains_closed;"
       text "${text}")
# Counted without their ';', a list separator: each match is then one list element.
cmake_policy(SET CMP0007 NEW)
string(REGEX MATCHALL "_closed = psbench_ospl_domains_closed" fixed "${text}")
string(REGEX MATCHALL "static c_type type[0-9]+ = NULL" caches "${text}")
list(LENGTH fixed n_fixed)
list(LENGTH caches n_caches)
if(NOT n_fixed EQUAL n_caches)
  message(FATAL_ERROR "${FILE}: ${n_caches} cached types but ${n_fixed} fixed: idlpp's output changed")
endif()
file(WRITE ${FILE} "extern unsigned psbench_ospl_domains_closed; /* drivers/opensplice/copyin_cache.cmake */\n${text}")
