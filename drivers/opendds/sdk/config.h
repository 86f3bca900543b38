// ACE's config.h for psbench's build of ACE 6.2.2 / TAO 2.2.2 with Debian 12's GCC 12
// and glibc 2.36 (drivers/opendds/build-sdk copies it to $ACE_ROOT/ace/config.h).
// glibc dropped <stropts.h> (STREAMS), I_RECVFD and <sys/sysctl.h>, which ACE 6.2.2's
// config-linux.h still expects; and glibc's guard for cpu_set_t is no longer
// __cpu_set_t_defined, so ACE would define its own cpu_set_t a second time.
// ACE_ANY_OPS_USE_NAMESPACE: TAO's IDL compiler then declares each type's Any insertion
// and extraction operators in the type's own namespace, where argument-dependent lookup
// finds them from TAO's templates (Any_Insert_Policy_T.h); declared at global scope
// after those templates, as TAO 2.2.2 does by default, GCC 12's two-phase lookup picks
// a private CORBA::Any member instead. ACE sets it for clang on macOS for this reason.
#define ACE_LACKS_STROPTS_H
#define ACE_LACKS_STRRECVFD
#define ACE_LACKS_SYS_SYSCTL_H
#define __cpu_set_t_defined
#define ACE_ANY_OPS_USE_NAMESPACE
#include "ace/config-linux.h"
