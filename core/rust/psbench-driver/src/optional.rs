//! The optional members, found at compile time: a Writer that implements Loan, Flush or
//! Drain, and a Reader that implements Release, has those entries in its table, and one that
//! does not has them NULL; nothing else to declare, so none can be forgotten (the C++ SDK's
//! concepts, HasLoan, HasDrain, ..., do the same for its members).
//!
//! Rust has no test of "does this type implement that trait" in a generic function, but a
//! method call on a concrete type has one: `(&Probe::<D>).drain_entry()` takes the impl on
//! `Probe<D>`, which exists where the writer implements Drain, before the fallback on
//! `&Probe<D>`, which always does (autoref specialization). driver_table! makes that call
//! where D is the driver's concrete type, in the driver's crate.

use std::marker::PhantomData;

use crate::adapter::{
    drain, flush, loan, release, write_loan, DrainEntry, FlushEntry, LoanEntry, ReleaseEntry,
    WriteLoanEntry, R, W,
};
pub use crate::adapter::{table, Entries};
use crate::{Drain, Driver, Flush, Loan, Release};

/// What driver_table! asks about D's Writer and Reader.
pub struct Probe<D>(PhantomData<D>);

impl<D> Probe<D> {
    pub const NEW: Probe<D> = Probe(PhantomData);
}

/// One optional member: the trait found on Probe<D> where the driver implements it, and
/// its fallback on &Probe<D> (None) everywhere.
macro_rules! optional_member {
    ($has:ident, $no:ident, $method:ident, $entry:ty, $endpoint:ident: $member:ident, $found:expr) => {
        pub trait $has {
            fn $method(&self) -> Option<$entry>;
        }
        impl<D: Driver> $has for Probe<D>
        where
            $endpoint<D>: $member,
        {
            fn $method(&self) -> Option<$entry> {
                Some($found)
            }
        }
        pub trait $no {
            fn $method(&self) -> Option<$entry> {
                None
            }
        }
        impl<D> $no for &Probe<D> {}
    };
}

optional_member!(HasLoan, NoLoan, loan_entries, (LoanEntry, WriteLoanEntry), W: Loan,
    (loan::<D> as LoanEntry, write_loan::<D> as WriteLoanEntry));
optional_member!(HasFlush, NoFlush, flush_entry, FlushEntry, W: Flush, flush::<D>);
optional_member!(HasDrain, NoDrain, drain_entry, DrainEntry, W: Drain, drain::<D>);
optional_member!(HasRelease, NoRelease, release_entry, ReleaseEntry, R: Release, release::<D>);
