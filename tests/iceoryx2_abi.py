"""The iceoryx2 driver through its C ABI from Python (ctypes mirrors of the driver.h
structs the tests need), for tests that must control exactly when a reader takes."""

import ctypes as C

PSB_BEST_EFFORT, PSB_RELIABLE = 1, 2
PSB_VOLATILE, PSB_TRANSIENT_LOCAL = 1, 2
PSB_KEEP_LAST, PSB_KEEP_ALL = 1, 2
PSB_NOTIFY_LISTENER, PSB_NOTIFY_WAIT, PSB_NOTIFY_POLL = 1, 2, 4


class Error(C.Structure):
    _fields_ = [("message", C.c_char * 512)]


class Option(C.Structure):
    _fields_ = [("key", C.c_char_p), ("value", C.c_char_p)]


class Caps(C.Structure):
    _fields_ = [
        ("reliability", C.c_uint32),
        ("durability", C.c_uint32),
        ("history", C.c_uint32),
        ("notify", C.c_uint32),
        ("transports", C.c_void_p),
        ("option_keys", C.c_void_p),
        ("max_payload", C.c_uint64),
        ("readers_per_topic", C.c_uint32),
        ("writers_per_topic", C.c_uint32),
        ("crosses_hosts", C.c_uint32),
    ]


class Qos(C.Structure):
    _fields_ = [(f, C.c_uint32) for f in ("reliability", "durability", "history", "depth")]


class Config(C.Structure):
    _fields_ = [
        ("run_id", C.c_char_p),
        ("transport", C.c_char_p),
        ("notify", C.c_uint32),
        ("qos", Qos),
        ("max_payload", C.c_uint64),
        ("options", C.POINTER(Option)),
        ("option_count", C.c_size_t),
        ("use_loan", C.c_uint32),
        ("intra_process", C.c_uint32),
        ("local_address", C.c_char_p),
        ("peer_addresses", C.c_void_p),
        ("readers", C.c_uint32),
        ("writers", C.c_uint32),
        ("run_topics", C.c_void_p),
        ("run_topic_count", C.c_uint32),
    ]


REFUSE = C.CFUNCTYPE(None, C.c_void_p, C.c_char_p, C.c_char_p)
P = C.c_void_p
ERR = C.POINTER(Error)


class Driver(C.Structure):
    _fields_ = [
        ("abi_version", C.c_uint32),
        ("name", C.c_char_p),
        ("description", C.c_char_p),
        ("version", C.CFUNCTYPE(C.c_char_p)),
        ("caps", Caps),
        ("check", C.CFUNCTYPE(C.c_int, C.POINTER(Config), REFUSE, P)),
        ("open", C.CFUNCTYPE(P, C.POINTER(Config), ERR)),
        ("close", C.CFUNCTYPE(None, P)),
        ("create_writer", C.CFUNCTYPE(P, P, C.c_char_p, ERR)),
        ("destroy_writer", C.CFUNCTYPE(None, P)),
        ("create_reader", C.CFUNCTYPE(P, P, C.c_char_p, P, P, ERR)),
        ("destroy_reader", C.CFUNCTYPE(None, P)),
        ("matched_readers", C.CFUNCTYPE(C.c_int, P)),
        ("matched_writers", C.CFUNCTYPE(C.c_int, P)),
        ("write", C.CFUNCTYPE(C.c_int, P, C.c_char_p, C.c_size_t, ERR)),
        ("loan", C.CFUNCTYPE(P, P, C.c_size_t, ERR)),
        ("write_loan", C.CFUNCTYPE(C.c_int, P, P, C.c_size_t, ERR)),
        (
            "take",
            C.CFUNCTYPE(C.c_int, P, C.c_int64, C.POINTER(P), C.POINTER(C.c_size_t), ERR),
        ),
        ("release", C.CFUNCTYPE(None, P)),
        ("flush", P),
        ("drain", P),
        ("writer_counters", P),
        ("reader_counters", P),
    ]


def load(path) -> Driver:
    lib = C.CDLL(str(path))
    lib.psb_driver_entry.restype = C.POINTER(Driver)
    return lib.psb_driver_entry().contents


def config(run_id: str, *, notify=PSB_NOTIFY_POLL, qos=(PSB_BEST_EFFORT, PSB_VOLATILE, 0, 0)):
    return Config(
        run_id=run_id.encode(),
        transport=b"shm",
        notify=notify,
        qos=Qos(*qos),
        max_payload=64,
        readers=1,
        writers=1,
        intra_process=1,
    )


def check(t: Driver, cfg: Config) -> list[tuple[str, str]]:
    found = []

    @REFUSE
    def refuse(_user, setting, reason):
        found.append((setting.decode(), reason.decode()))

    n = t.check(C.byref(cfg), refuse, None)
    assert n == len(found)
    return found


def ok(result, err: Error):
    assert result, err.message.decode()
    return result


def take_all(t: Driver, reader) -> list[bytes]:
    """Every sample the reader holds now (poll: never blocks)."""
    got, data, size, err = [], P(), C.c_size_t(), Error()
    while (rc := t.take(reader, 0, C.byref(data), C.byref(size), C.byref(err))) == 1:
        got.append(C.string_at(data.value, size.value) if size.value else b"")
    assert rc == 0, err.message.decode()
    return got
