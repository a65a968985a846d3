"""The Linux confinement step: a process confines itself (namespaces, mounts, Landlock, no
capabilities), then ``execve``s the command, which inherits every restriction and cannot lift
one.

Run from its source (``python -I -S -c SOURCE --write DIR ... -- PROGRAM ARGS...``, see
:func:`arguments`): the parent reads this file once, at import, so a command that can write
where yoagent is installed (a clone's ``.venv`` inside the workspace) cannot change what
confines the next one. It imports no yoagent module and only the cheapest of the standard
library (``ctypes``, ``fcntl``, ``struct``; no ``json``, ``re``, ``socket`` or ``typing``):
the step costs an interpreter start without ``site`` plus ≈ 5 ms, where ``python -m
yoagent.tools._confine`` cost ≈ 280 ms and a JSON spec with ``socket`` ≈ 10 ms more
(``benchmarks/sandbox_start.py``). It is not a ``preexec_fn``: the runner's ``fork`` +
``exec`` stays the one safe path in a process with threads, and what happens between our
``exec`` and the command's is this file.

Hand-written system calls (ctypes), kept to the minimum: Python 3.11 has no
``os.unshare`` (3.12 added it) and no ``mount``, and the Landlock bindings on PyPI
(``landlock`` 1.0.0.dev5, ``py-landlock`` 0.1.1, ``landlockpy`` 0.2.0) are single-author
alpha releases that cover Landlock alone, so the namespaces would need ctypes anyway, and
loading one would cost the ``site`` import this step avoids. What is done, in order:

1. ``unshare``: a mount namespace, and a network namespace when the network is off (its
   own loopback, brought up, and no other interface); when not root, inside a new user
   namespace that maps the caller's uid and gid to themselves (an unprivileged process may
   create one; the command keeps its identity).
2. mounts, private to that namespace: an empty ``tmpfs`` on ``/dev/shm`` (shared memory of
   its own, as under bubblewrap), each ``pin`` bound onto itself (a mount point cannot be
   renamed or removed), each ``read_only`` path bound onto itself and made read-only.
3. Landlock: the whole tree readable and executable, ``write`` paths and the new
   ``/dev/shm`` fully writable, ``devices`` writable as files (each rule asks only for
   rights the kernel's ABI handles); mounts and signals to processes outside the sandbox
   denied (the latter from ABI 6); ``no_new_privs`` set, so no setuid program regains what
   was dropped.
4. capabilities: every one dropped from the bounding, ambient, inheritable, permitted and
   effective sets, so a command of root cannot set the host name or the clock, load a
   module, make device files or join another namespace, and the ``exec`` grants none back.
5. ``execvp`` the command.

Any failure before step 5 prints ``yoagent sandbox: ...`` on stderr and exits with
:data:`SETUP_FAILED`: the command never runs unconfined.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import struct
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ≈ 2 ms of import; annotations are strings here
    from collections.abc import Sequence
    from typing import Final, NoReturn

SETUP_FAILED: Final = 125
"""The exit status when confinement could not be set up (the command did not run)."""

# Landlock (include/uapi/linux/landlock.h); one syscall number on every architecture.
_SYS_CREATE_RULESET: Final = 444
_SYS_ADD_RULE: Final = 445
_SYS_RESTRICT_SELF: Final = 446
_CREATE_RULESET_VERSION: Final = 1
_RULE_PATH_BENEATH: Final = 1

EXECUTE: Final = 1 << 0
WRITE_FILE: Final = 1 << 1
READ_FILE: Final = 1 << 2
READ_DIR: Final = 1 << 3
_DIR_WRITES: Final = sum(1 << bit for bit in range(4, 13))  # remove, make char/dir/reg/...
REFER: Final = 1 << 13  # ABI 2
TRUNCATE: Final = 1 << 14  # ABI 3
_SCOPE_ABSTRACT_UNIX_SOCKET: Final = 1 << 0  # ABI 6
_SCOPE_SIGNAL: Final = 1 << 1  # ABI 6
READ: Final = EXECUTE | READ_FILE | READ_DIR
_FILE_RIGHTS: Final = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE

_CLONE_NEWNS: Final = 0x00020000
_CLONE_NEWUSER: Final = 0x10000000
_CLONE_NEWNET: Final = 0x40000000
_MS_RDONLY: Final = 1
_MS_NOSUID: Final = 2
_MS_NODEV: Final = 4
_MS_REMOUNT: Final = 32
_MS_BIND: Final = 4096
_MS_REC: Final = 16384
_MS_PRIVATE: Final = 1 << 18
_PR_SET_NO_NEW_PRIVS: Final = 38
_PR_CAPBSET_DROP: Final = 24
_PR_CAP_AMBIENT: Final = 47
_PR_CAP_AMBIENT_CLEAR_ALL: Final = 4
_CAPABILITY_VERSION_3: Final = 0x20080522  # two 32-bit words per set
_EINVAL: Final = 22
# statvfs flags that a read-only remount must keep (a user namespace may not clear them)
_KEPT_FLAGS: Final = (
    ("ST_NOSUID", 2),
    ("ST_NODEV", 4),
    ("ST_NOEXEC", 8),
    ("ST_NOATIME", 1024),
    ("ST_NODIRATIME", 2048),
    ("ST_RELATIME", 1 << 21),
)
SHARED_MEMORY: Final = "/dev/shm"
_AF_INET: Final = 2
_SOCK_DGRAM: Final = 2
_SIOCGIFFLAGS: Final = 0x8913
_SIOCSIFFLAGS: Final = 0x8914
_IFF_UP: Final = 0x1


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


class Spec:
    """What the command may do besides reading (the parent's plan, from the arguments)."""

    def __init__(self) -> None:
        self.write: list[str] = []
        """Folders the command may change, with everything beneath them."""
        self.devices: list[str] = []
        """Device files it may write (``/dev/null``)."""
        self.pin: list[str] = []
        """Folders that cannot be renamed or removed (bound onto themselves)."""
        self.read_only: list[str] = []
        """Paths inside ``write`` kept read-only."""
        self.network = False


_LISTS: Final = {
    "--write": "write",
    "--device": "devices",
    "--pin": "pin",
    "--read-only": "read_only",
}


def arguments(spec: Spec) -> list[str]:
    """The options that give ``spec`` to this script (before ``--`` and the program)."""
    line: list[str] = ["--network"] if spec.network else []
    for option, field in _LISTS.items():
        for path in getattr(spec, field):
            line += [option, path]
    return line


def parse(argv: Sequence[str]) -> tuple[Spec, list[str]]:
    """The spec and the program of ``OPTIONS -- PROGRAM ARGS...``. Raises ``ValueError``."""
    spec = Spec()
    index = 0
    while index < len(argv):
        option = argv[index]
        if option == "--":
            program = list(argv[index + 1 :])
            if not program:
                raise ValueError("no program after '--'")
            return spec, program
        if option == "--network":
            spec.network = True
            index += 1
            continue
        field = _LISTS.get(option)
        if field is None or index + 1 >= len(argv):
            raise ValueError(f"unexpected argument {option!r}")
        getattr(spec, field).append(argv[index + 1])
        index += 2
    raise ValueError("no '--' before the program")


class SetupError(Exception):
    """A confinement step failed (the message says which, with the system's reason)."""


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.mount.argtypes = (
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_ulong,
        ctypes.c_void_p,
    )
    libc.unshare.argtypes = (ctypes.c_int,)
    libc.prctl.argtypes = (ctypes.c_int, *(ctypes.c_ulong,) * 4)
    libc.capset.argtypes = (ctypes.c_char_p, ctypes.c_char_p)
    libc.socket.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_int)
    return libc


def _check(result: int, what: str) -> int:
    if result < 0:
        errno = ctypes.get_errno()
        raise SetupError(f"{what}: {os.strerror(errno)}")
    return result


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is missing or disabled."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        libc = _libc()
    except OSError:
        return 0
    version = libc.syscall(
        ctypes.c_long(_SYS_CREATE_RULESET), None, ctypes.c_size_t(0), ctypes.c_uint32(1)
    )
    return max(int(version), 0)


def handled_rights(abi: int) -> int:
    """The file-system rights Landlock restricts at ``abi`` (device ioctls left alone)."""
    rights = READ | WRITE_FILE | _DIR_WRITES
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    return rights


def _write_file(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _enter_namespaces(libc: ctypes.CDLL, *, network: bool) -> None:
    flags = _CLONE_NEWNS | (0 if network else _CLONE_NEWNET)
    uid, gid = os.geteuid(), os.getegid()
    as_user = uid != 0
    if as_user:
        flags |= _CLONE_NEWUSER
    _check(libc.unshare(flags), "unshare (namespaces)")
    if as_user:
        try:
            _write_file("/proc/self/setgroups", "deny")
            _write_file("/proc/self/uid_map", f"{uid} {uid} 1")
            _write_file("/proc/self/gid_map", f"{gid} {gid} 1")
        except OSError as error:
            raise SetupError(f"user namespace id maps: {error.strerror}") from None
    if not network:
        _loopback_up(libc)


def _loopback_up(libc: ctypes.CDLL) -> None:
    sock = _check(libc.socket(_AF_INET, _SOCK_DGRAM, 0), "loopback in the network namespace")
    try:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))
    except OSError as error:
        raise SetupError(f"loopback in the network namespace: {error.strerror}") from None
    finally:
        os.close(sock)


def _bind(libc: ctypes.CDLL, path: str, *, read_only: bool) -> None:
    target = os.fsencode(path)
    _check(libc.mount(target, target, None, _MS_BIND, None), f"bind {path}")
    if read_only:
        kept = os.statvfs(path).f_flag
        flags = _MS_REMOUNT | _MS_BIND | _MS_RDONLY
        flags |= sum(ms for name, ms in _KEPT_FLAGS if kept & getattr(os, name, 0))
        _check(libc.mount(None, target, None, flags, None), f"read-only {path}")


def _mount(libc: ctypes.CDLL, pins: list[str], read_only: list[str]) -> None:
    _check(libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None), "private mounts")
    if os.path.isdir(SHARED_MEMORY):
        shm = SHARED_MEMORY.encode()
        flags = _MS_NOSUID | _MS_NODEV
        _check(libc.mount(b"tmpfs", shm, b"tmpfs", flags, b"mode=1777"), "tmpfs /dev/shm")
    for path in pins:
        _bind(libc, path, read_only=False)
    for path in read_only:
        _bind(libc, path, read_only=True)


def _add_rule(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError as error:
        raise SetupError(f"landlock rule for {path}: {error.strerror}") from None
    try:
        if not os.path.isdir(path):
            rights &= _FILE_RIGHTS
        attr = _PathBeneathAttr(allowed_access=rights, parent_fd=fd)
        result = libc.syscall(
            ctypes.c_long(_SYS_ADD_RULE),
            ctypes.c_int(ruleset),
            ctypes.c_int(_RULE_PATH_BENEATH),
            ctypes.byref(attr),
            ctypes.c_uint32(0),
        )
        _check(int(result), f"landlock rule for {path}")
    finally:
        os.close(fd)


def _landlock(libc: ctypes.CDLL, spec: Spec) -> None:
    abi = landlock_abi()
    if abi < 1:
        raise SetupError("Landlock is not available in this kernel")
    handled = handled_rights(abi)
    scoped = 0
    if abi >= 6:
        scoped = _SCOPE_SIGNAL | (0 if spec.network else _SCOPE_ABSTRACT_UNIX_SOCKET)
    attr = _RulesetAttr(handled_access_fs=handled, handled_access_net=0, scoped=scoped)
    ruleset = _check(
        int(
            libc.syscall(
                ctypes.c_long(_SYS_CREATE_RULESET),
                ctypes.byref(attr),
                ctypes.c_size_t(ctypes.sizeof(attr)),
                ctypes.c_uint32(0),
            )
        ),
        "landlock ruleset",
    )
    rules = [("/", READ)]
    shared = [SHARED_MEMORY] if os.path.isdir(SHARED_MEMORY) else []
    rules += [(path, handled) for path in [*spec.write, *shared]]
    devices = [path for path in spec.devices if os.path.exists(path)]
    rules += [(path, READ_FILE | WRITE_FILE | TRUNCATE) for path in devices]
    try:
        for path, rights in rules:
            # only rights the ruleset handles: the kernel refuses a rule asking for more
            # (TRUNCATE before ABI 3)
            _add_rule(libc, ruleset, path, rights & handled)
        _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        result = libc.syscall(
            ctypes.c_long(_SYS_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0)
        )
        _check(int(result), "landlock restrict")
    finally:
        os.close(ruleset)


def _drop_capabilities(libc: ctypes.CDLL) -> None:
    capability = 0
    while libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) == 0:
        capability += 1  # until EINVAL: past the kernel's last capability
    if ctypes.get_errno() != _EINVAL:
        _check(-1, "drop the capability bounding set")
    _check(libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "ambient capabilities")
    header = struct.pack("Ii", _CAPABILITY_VERSION_3, 0)
    _check(libc.capset(header, bytes(24)), "drop the capabilities")


def confine(spec: Spec) -> None:
    """Apply ``spec`` to this process (see the module docstring). Raises :class:`SetupError`."""
    libc = _libc()
    _enter_namespaces(libc, network=spec.network)
    _mount(libc, spec.pin, spec.read_only)
    _landlock(libc, spec)
    _drop_capabilities(libc)


def main(argv: Sequence[str]) -> NoReturn:
    """``OPTIONS -- PROGRAM ARGS...``: confine, then become the program."""
    try:
        spec, program = parse(argv)
    except ValueError as error:
        _fail(f"{error} (usage: _confine.py [--network] [--write DIR]... -- PROGRAM [ARGS...]); "
              f"the command was not run")  # fmt: skip
    try:
        confine(spec)
    except SetupError as error:
        _fail(f"could not confine the command: {error}; it was not run")
    try:
        os.execvp(program[0], program)
    except OSError as error:
        sys.stderr.write(f"{program[0]}: {error.strerror}\n")
        sys.stderr.flush()
        os._exit(127)


def _fail(message: str) -> NoReturn:
    sys.stderr.write(f"yoagent sandbox: {message}\n")
    sys.stderr.flush()
    os._exit(SETUP_FAILED)


if __name__ == "__main__":
    main(sys.argv[1:])
