//! `#[repr(C)]` mirrors of core/include/psbench/driver.h (ABI 8), field for field. The
//! layout test (tests/layout.rs) compiles driver.h and fails when one drifts.
#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_void};

/// PSB_ABI_VERSION: the node refuses a table with another.
pub const PSB_ABI_VERSION: u32 = 8;
pub const PSB_DRIVER_ENTRY_SYMBOL: &str = "psb_driver_entry";

pub const PSB_BEST_EFFORT: u32 = 1 << 0;
pub const PSB_RELIABLE: u32 = 1 << 1;
pub const PSB_VOLATILE: u32 = 1 << 0;
pub const PSB_TRANSIENT_LOCAL: u32 = 1 << 1;
pub const PSB_PERSISTENT: u32 = 1 << 2;
pub const PSB_KEEP_LAST: u32 = 1 << 0;
pub const PSB_KEEP_ALL: u32 = 1 << 1;
pub const PSB_NOTIFY_LISTENER: u32 = 1 << 0;
pub const PSB_NOTIFY_WAIT: u32 = 1 << 1;
pub const PSB_NOTIFY_POLL: u32 = 1 << 2;

/// PSB_COUNTER_LISTENER_ERRORS: errors a listener-mode reader met on its delivery thread.
pub const PSB_COUNTER_LISTENER_ERRORS: &str = "listener_errors";

#[repr(C)]
pub struct psb_error {
    pub message: [c_char; 512],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct psb_option {
    pub key: *const c_char,
    pub value: *const c_char,
}

/// Opaque handles: the node never looks inside.
#[repr(C)]
pub struct psb_context {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct psb_writer {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct psb_reader {
    _opaque: [u8; 0],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct psb_capabilities {
    pub reliability: u32,
    pub durability: u32,
    pub history: u32,
    pub notify: u32,
    pub transports: *const *const c_char,
    pub option_keys: *const *const c_char,
    pub max_payload: u64,
    pub readers_per_topic: u32,
    pub writers_per_topic: u32,
    pub crosses_hosts: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct psb_qos {
    pub reliability: u32,
    pub durability: u32,
    pub history: u32,
    pub history_depth: u32,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct psb_config {
    pub run_id: *const c_char,
    pub transport: *const c_char,
    pub notify: u32,
    pub qos: psb_qos,
    pub max_payload: u64,
    pub options: *const psb_option,
    pub option_count: usize,
    pub use_loan: u32,
    pub intra_process: u32,
    pub local_address: *const c_char,
    pub peer_addresses: *const *const c_char,
    pub readers: u32,
    pub writers: u32,
    pub run_topics: *const *const c_char,
    pub run_topic_count: u32,
}

pub type psb_on_data =
    Option<unsafe extern "C" fn(user: *mut c_void, data: *const c_void, len: usize)>;
pub type psb_refuse =
    Option<unsafe extern "C" fn(user: *mut c_void, setting: *const c_char, reason: *const c_char)>;
pub type psb_put_counter =
    Option<unsafe extern "C" fn(user: *mut c_void, name: *const c_char, value: u64)>;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct psb_driver {
    pub abi_version: u32,
    pub name: *const c_char,
    pub description: *const c_char,
    pub version: Option<unsafe extern "C" fn() -> *const c_char>,
    pub caps: psb_capabilities,
    pub check: Option<
        unsafe extern "C" fn(
            cfg: *const psb_config,
            refuse: psb_refuse,
            user: *mut c_void,
        ) -> c_int,
    >,
    pub open: Option<
        unsafe extern "C" fn(cfg: *const psb_config, err: *mut psb_error) -> *mut psb_context,
    >,
    pub close: Option<unsafe extern "C" fn(ctx: *mut psb_context)>,
    pub create_writer: Option<
        unsafe extern "C" fn(
            ctx: *mut psb_context,
            topic: *const c_char,
            err: *mut psb_error,
        ) -> *mut psb_writer,
    >,
    pub destroy_writer: Option<unsafe extern "C" fn(writer: *mut psb_writer)>,
    pub create_reader: Option<
        unsafe extern "C" fn(
            ctx: *mut psb_context,
            topic: *const c_char,
            on_data: psb_on_data,
            user: *mut c_void,
            err: *mut psb_error,
        ) -> *mut psb_reader,
    >,
    pub destroy_reader: Option<unsafe extern "C" fn(reader: *mut psb_reader)>,
    pub matched_readers: Option<unsafe extern "C" fn(writer: *mut psb_writer) -> c_int>,
    pub matched_writers: Option<unsafe extern "C" fn(reader: *mut psb_reader) -> c_int>,
    pub write: Option<
        unsafe extern "C" fn(
            writer: *mut psb_writer,
            data: *const c_void,
            len: usize,
            err: *mut psb_error,
        ) -> c_int,
    >,
    pub loan: Option<
        unsafe extern "C" fn(
            writer: *mut psb_writer,
            len: usize,
            err: *mut psb_error,
        ) -> *mut c_void,
    >,
    pub write_loan: Option<
        unsafe extern "C" fn(
            writer: *mut psb_writer,
            sample: *mut c_void,
            len: usize,
            err: *mut psb_error,
        ) -> c_int,
    >,
    pub take: Option<
        unsafe extern "C" fn(
            reader: *mut psb_reader,
            timeout_ns: i64,
            data: *mut *const c_void,
            len: *mut usize,
            err: *mut psb_error,
        ) -> c_int,
    >,
    pub release: Option<unsafe extern "C" fn(reader: *mut psb_reader)>,
    pub flush: Option<unsafe extern "C" fn(writer: *mut psb_writer, err: *mut psb_error) -> c_int>,
    pub drain: Option<
        unsafe extern "C" fn(
            writer: *mut psb_writer,
            timeout_ns: i64,
            err: *mut psb_error,
        ) -> c_int,
    >,
    pub writer_counters: Option<
        unsafe extern "C" fn(writer: *mut psb_writer, put: psb_put_counter, user: *mut c_void),
    >,
    pub reader_counters: Option<
        unsafe extern "C" fn(reader: *mut psb_reader, put: psb_put_counter, user: *mut c_void),
    >,
}

pub type psb_driver_entry_fn = unsafe extern "C" fn() -> *const psb_driver;
