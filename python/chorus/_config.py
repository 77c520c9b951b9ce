"""chorusConfig_t: per-communicator settings given as keywords (Comm.from_env(timeout_seconds=30, algo="ring")), each
the snake_case name of a field of chorus.h. An unset field takes its environment variable, as in C."""

import ctypes
import re

_MAGIC = 0x43484346
# CHORUS_VERSION_CODE of the chorus.h these fields mirror; the library reads as many fields as `size` covers, so a
# library with more fields still takes this struct.
_HEADER_VERSION = 100
_UNSET_INT = -2147483648
_UNSET_SIZE = ctypes.c_size_t(-1).value
_UNSET_DOUBLE = -1.0e300

_FIELDS = [
    ("size", ctypes.c_size_t), ("magic", ctypes.c_uint), ("version", ctypes.c_uint),
    ("timeoutSeconds", ctypes.c_double), ("algo", ctypes.c_char_p), ("transports", ctypes.c_char_p),
    ("chunkSize", ctypes.c_size_t), ("socketsPerPeer", ctypes.c_int), ("checkMismatch", ctypes.c_int),
    ("commName", ctypes.c_char_p), ("shmBufferBytes", ctypes.c_size_t), ("shmCma", ctypes.c_int),
    ("topoProbe", ctypes.c_int), ("socketIfname", ctypes.c_char_p), ("fusionThreshold", ctypes.c_size_t),
    ("splitShare", ctypes.c_int), ("traceDir", ctypes.c_char_p), ("traceLevel", ctypes.c_int),
    ("ibEmulation", ctypes.c_int), ("ibHca", ctypes.c_char_p), ("ibGidIndex", ctypes.c_int),
    ("ibTimeout", ctypes.c_int), ("ibRetryCnt", ctypes.c_int), ("ibDisable", ctypes.c_int),
    ("ibQpsPerPeer", ctypes.c_int), ("compression", ctypes.c_char_p), ("autotune", ctypes.c_int),
    ("autotuneFile", ctypes.c_char_p), ("deviceCalls", ctypes.c_int), ("encrypt", ctypes.c_int),
    ("deviceChunkSize", ctypes.c_size_t), ("flightRecords", ctypes.c_int), ("flightDir", ctypes.c_char_p),
    ("socketFamily", ctypes.c_char_p), ("metricsPort", ctypes.c_int),
]


class ConfigStruct(ctypes.Structure):
    _fields_ = _FIELDS


_UNSET = {ctypes.c_int: _UNSET_INT, ctypes.c_size_t: _UNSET_SIZE, ctypes.c_double: _UNSET_DOUBLE,
          ctypes.c_char_p: None}
# keyword -> (field, C type), for the settings (not size, magic, version).
KEYWORDS = {re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower(): (name, kind) for name, kind in _FIELDS[3:]}


def make_config(settings):
    """A ConfigStruct with settings (keyword: value) set and every other field unset; None when there are none."""
    if not settings:
        return None
    c = ConfigStruct()
    c.size = ctypes.sizeof(ConfigStruct)
    c.magic = _MAGIC
    c.version = _HEADER_VERSION
    for name, kind in _FIELDS[3:]:
        setattr(c, name, _UNSET[kind])
    for key, value in settings.items():
        if key not in KEYWORDS:
            raise TypeError(f"unknown communicator setting {key!r} (settings: {', '.join(sorted(KEYWORDS))})")
        name, kind = KEYWORDS[key]
        if kind is ctypes.c_char_p:
            value = str(value).encode()
        elif kind is ctypes.c_double:
            value = float(value)
        else:
            value = int(value)
        setattr(c, name, value)
    return c


def config_pointer(config):
    return ctypes.addressof(config) if config is not None else None
