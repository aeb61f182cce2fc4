#!/usr/bin/env python3
"""Generates the checker's view of the MPI API from src/api/mpi_api.json.

The spec holds data only: each wrapped MPI function once, with its kind,
family, collective pattern, wait rule and the roles of its parameters. The
parameter types come from the MPI library's own prototypes (mpi_proto.h), so
that every generated definition matches the header exactly; a function (or a
large-count twin) that the header lacks is left out of the wrappers.

Outputs, into the output directory:
  table:    api/function_ids.inc            the FunctionId enumerators
            api/function_table.inc          one FunctionInfo per FunctionId (api/functions.hpp)
  wrappers: interceptors/mpi_wrappers.inc   one readable C++ definition per wrapped function,
                                            included by src/interceptors/wrappers.cpp

Usage: generate_api.py SPEC table|wrappers OUTPUT_DIR MPI_HEADER... (mpi_proto.h and mpio.h for MPICH)
"""
import json
import os
import re
import sys

SPEC_HELP = "see the comment at the top of src/api/mpi_api.json"


class SpecError(Exception):
    pass


# ---------------------------------------------------------------------------
# The spec


def load_spec(path):
    with open(path) as f:
        spec = json.load(f)
    functions = spec["functions"]
    names = [f["name"] for f in functions]
    if len(set(names)) != len(names):
        raise SpecError("a function is listed twice in " + path)
    return spec, functions


def parse_params(entry):
    """[(name, role)] from "name" or "name:role" strings."""
    out = []
    for p in entry.get("params", []):
        name, _, role = p.partition(":")
        out.append((name, role or name))
    return out


def expand(functions):
    """The spec's functions with their large-count twins (name_c), each a dict
    with the derived fields filled in: plain, family, form, pattern, waits."""
    by_name = {f["name"]: f for f in functions}
    out = []
    for f in functions:
        f = dict(f)
        f.setdefault("family", f["name"])
        if f["family"] not in by_name:
            raise SpecError(f"{f['name']}: family {f['family']} is not in the spec")
        base = by_name[f["family"]]
        for key in ("pattern", "mode"):
            if key not in f and key in base:
                f[key] = base[key]
        if f["kind"] == "nonblocking" and "record" not in f:
            # A nonblocking collective is recorded, and waited on, as its blocking base.
            for key in ("record", "waits"):
                if key in base:
                    f[key] = base[key]
        if f["kind"] == "persistent" and "waits" not in f and "waits" in base:
            f["waits"] = base["waits"]  # a persistent collective's start is waited on as its blocking base
        f["plain"] = f["name"]
        f["large"] = False
        out.append(f)
        if f.get("large_count"):
            twin = dict(f)
            twin["name"] = f["name"] + "_c"
            twin["large"] = True
            for key in ("sync",):
                if key in twin:
                    twin[key] = twin[key] + "_c"
            if "via" in twin:
                twin["via"] = [v + "_c" for v in twin["via"]]
            out.append(twin)
    return out


# ---------------------------------------------------------------------------
# The MPI header


def read_prototypes(header_paths):
    """{name: [declaration, ...]} for every int MPI_name(...) in the headers. The first declaration of a name
    wins: ROMIO's mpio.h repeats MPI_Type_create_darray and MPI_Type_create_subarray inside an #if that MPICH
    leaves out, one with a typo (const int array_of_psizes), after mpi.h's."""
    text = ""
    for path in header_paths:
        with open(path) as f:
            text += f.read() + "\n"
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"\s+", " ", text)
    protos = {}
    for m in re.finditer(r"\bint MPI_(\w+)\s*\(([^;]*?)\)((?:\s*[A-Z][A-Z0-9_]*(?:\s*\([^)]*\))?)*)\s*;", text):
        params = m.group(2).strip()
        protos.setdefault(m.group(1), [] if params in ("", "void") else [p.strip() for p in params.split(",")])
    return protos


def renamed(declaration, name):
    m = re.search(r"(\w+)(\s*(?:\[\s*\w*\s*\]\s*)*)$", declaration)
    if not m:
        raise SpecError("cannot read the parameter name of " + declaration)
    return declaration[:m.start(1)] + name + m.group(2)


# ---------------------------------------------------------------------------
# One function: the pieces of its wrapper


# The interceptors' describers (wrappers.cpp) whose arguments are the same
# roles for every function that names them: "a|b" takes the first role the
# function has, "=x" a literal when it has none.
# The describers that count a collective on its communicator.
COUNTED_RECORDS = {"collective", "collective_data", "reduction", "rooted", "rooted_reduction", "neighborhood",
                   "connection"}
RECORD_ROLES = {
    "send_to": ("buf", "count", "datatype", "dest", "tag", "comm"),
    "receive_from": ("buf", "count", "datatype", "source", "tag", "comm"),
    "probe": ("source", "tag", "comm"),
    "matched_receive": ("buf", "count", "datatype"),
    "send_receive": ("sendbuf|buf", "sendcount|count", "sendtype|datatype", "dest", "sendtag", "source", "recvtag",
                     "comm"),
    "collective": ("comm",),
    "neighborhood": ("comm",),
    "unreadable": ("comm",),
    "collective_data": ("sendbuf", "sendcount", "sendtype", "comm"),
    "reduction": ("sendbuf", "count|recvcount|=0", "datatype", "op", "comm"),
    "rooted_reduction": ("sendbuf", "count", "datatype", "op", "root", "comm"),
    "file_collective": ("file",),
    "file_collective_data": ("file", "offset|=-1", "buf", "count", "datatype"),
    "file_access": ("file", "offset|=-1", "buf", "count", "datatype"),
    "connection": ("root|=MPI_PROC_NULL", "comm|=MPI_COMM_NULL"),
    "window_collective": ("win", "assertion"),
    "opaque": (),
}


class Function:
    def __init__(self, entry, by_name, declarations):
        self.entry = entry
        self.name = entry["name"]
        self.by_name = by_name
        self.params = parse_params(entry)
        self.declarations = declarations
        if declarations is not None:
            # The header's types with the spec's names (MPI libraries name parameters differently).
            if len(declarations) != len(self.params):
                raise SpecError(f"MPI_{self.name}: the spec has {len(self.params)} parameters, the header "
                                f"{len(declarations)}")
            declarations = [renamed(d, n) for d, (n, _) in zip(declarations, self.params)]
            self.declarations = declarations
        self.roles = {}
        for name, role in self.params:
            if role in self.roles:
                raise SpecError(f"MPI_{self.name}: two parameters have the role {role}")
            self.roles[role] = name

    def has(self, role):
        return role in self.roles

    def arg(self, choices):
        """The parameter of the first role of "a|b|=literal" that the function has."""
        for choice in choices.split("|"):
            if choice.startswith("="):
                return choice[1:]
            if choice in self.roles:
                return self.roles[choice]
        raise SpecError(f"MPI_{self.name}: no parameter has the role {choices} ({SPEC_HELP})")

    def args(self, *choices):
        return ", ".join(self.arg(c) for c in choices)

    def declaration_of(self, name):
        return self.declarations[[n for n, _ in self.params].index(name)]

    def all_args(self, params=None):
        return ", ".join(n for n, _ in (params or self.params))

    def id(self):
        return "FunctionId::" + self.name

    def request_array(self):
        """(count, array) of a call on requests: a call on one request has an array of one."""
        if self.has("requests"):
            return self.arg("count"), self.arg("requests")
        return "1", self.request_address()

    def logged_requests(self):
        """The requests the communication log is given ("count, array"): a Wait's or Test's; none ("") for
        other calls, but for MPI_Improbe, whose finds the log names (comm_log.hpp)."""
        if self.entry["record"] == "on_requests":
            return "{}, {}".format(*self.request_array())
        return "0, nullptr" if self.name == "Improbe" else ""

    def request_address(self):
        """The address of the one request: MPI_Request_get_status takes the handle itself, the others its address."""
        request = self.arg("request")
        pointer = "*" in self.declaration_of(request) if self.declarations else True
        return request if pointer else "&" + request

    # The CallRecord: interceptors' describers (wrappers.cpp), arguments by role.
    # A describer that counts a collective gets the function first: each
    # communicator keeps what its last collectives were.
    def record(self):
        kind = self.entry["record"]
        a = self.args
        pattern = self.entry.get("pattern")
        function = f"{self.id()}, " if kind in COUNTED_RECORDS else ""
        if kind in RECORD_ROLES:
            return f"{kind}({function}{a(*RECORD_ROLES[kind])})"
        if kind == "rooted":
            side = {"bcast": ("buf", "count", "datatype"), "gather": ("sendbuf", "sendcount", "sendtype"),
                    "scatter": ("recvbuf", "recvcount", "recvtype")}[pattern]
            return f"rooted({function}{a(*side, 'root', 'comm')})"
        if kind == "on_requests":
            return "on_requests({}, {})".format(*self.request_array())
        epoch = {"access": "windows::Epoch::Access", "exposure": "windows::Epoch::Exposure"}.get(
            self.entry.get("epoch"))
        if kind == "epoch_start":
            return f"epoch_start({epoch}, {a('group', 'assertion', 'win')})"
        if kind == "epoch_end":
            return f"epoch_end({epoch}, {a('win')})"
        if kind == "on_target":
            extra = [r for r in ("lock_type", "assertion") if self.has(r)]
            return f"on_target({a('target', 'win', *extra)})"
        if kind == "on_window":
            return f"on_window({a('win', *[r for r in ('assertion',) if self.has(r)])})"
        raise SpecError(f"MPI_{self.name}: unknown record {kind}")

    # The checks' object around the forwarded call (checks/*.hpp), or None.
    def check(self):
        a = self.args
        pattern = self.entry.get("pattern")
        if pattern:
            fid = self.id()
            calls = {
                "barrier": lambda: f"checks::barrier({fid}, {a('comm')})",
                "bcast": lambda: f"checks::bcast({fid}, {a('buf', 'count', 'datatype', 'root', 'comm')})",
                "reduce": lambda: "checks::reduce(" + fid + ", " + a(
                    "sendbuf", "count", "datatype", "op", "root|=checks::kNoRoot", "comm") + ")",
                "gather": lambda: "checks::gather(" + fid + ", " + a(
                    "sendbuf", "sendcount", "sendtype", "recvbuf", "recvcount|recvcounts", "recvtype", "root",
                    "comm") + ")",
                "scatter": lambda: "checks::scatter(" + fid + ", " + a(
                    "sendbuf", "sendcount|sendcounts", "sendtype", "recvbuf", "recvcount", "recvtype", "root",
                    "comm") + ")",
                "allgather": lambda: "checks::allgather(" + fid + ", " + a(
                    "sendbuf", "sendcount", "sendtype", "recvbuf", "recvcount|recvcounts", "recvtype", "comm") + ")",
                "alltoall": lambda: "checks::alltoall(" + fid + ", " + a(
                    "sendbuf", "sendcount|sendcounts", "sendtype|sendtypes", "recvbuf", "recvcount|recvcounts",
                    "recvtype|recvtypes", "comm") + ")",
                "reduce_scatter": lambda: "checks::reduce_scatter(" + fid + ", " + a(
                    "sendbuf", "recvcount|recvcounts", "datatype", "op", "comm") + ")",
                "neighborhood": lambda: f"checks::neighborhood({fid}, {a('comm')})",
            }
            return calls[pattern]()
        check = self.entry.get("check")
        if check is None:
            return None
        name = self.id()
        site = "MPISENTRY_CALL_SITE"
        many = "checks::CompleteMany(checks::CompleteMany::Mode::"
        calls = {
            "send": lambda: (f"checks::SendCheck({name}, {a('buf', 'count', 'datatype', 'dest', 'tag', 'comm')}, "
                             f"{site})"),
            "receive": lambda: (f"checks::ReceiveCheck({name}, " + (
                a('buf', 'count', 'datatype', 'message') if self.has('message')
                else a('buf', 'count', 'datatype', 'source', 'tag', 'comm')) + f", {a('status')}, {site})"),
            "send_receive": lambda: "checks::SendReceiveCheck(" + name + ", " + a(
                "sendbuf|buf", "sendcount|count", "sendtype|datatype", "dest", "sendtag", "recvbuf|buf",
                "recvcount|count", "recvtype|datatype", "source", "recvtag", "comm", "status") + ", " + site + ")",
            # Its arguments go to done(), read after the call: held in the
            # object across the call, they cost every MPI_Iprobe about 2 ns.
            "probe": lambda: ("checks::ProbeCheck()",
                              f"{a('source', 'tag', 'comm', 'message|=nullptr', 'flag|=nullptr', 'status')}, {site}"),
            "complete_one": lambda: (f"checks::CompleteOne({self.request_address()}, {a('status', 'flag|=nullptr')}, "
                                     f"checks::Handle::Released, {site})"),
            "complete_one_kept": lambda: (f"checks::CompleteOne({self.request_address()}, {a('status', 'flag')}, "
                                          f"checks::Handle::Kept, {site})"),
            "complete_all": lambda: many + "All, " + a(
                "count", "requests", "statuses", "flag|=nullptr", "=nullptr", "=nullptr") + f", {site})",
            "complete_any": lambda: many + "Any, " + a(
                "count", "requests", "status", "flag|=nullptr", "index", "=nullptr") + f", {site})",
            "complete_some": lambda: many + "Some, " + a(
                "count", "requests", "statuses", "=nullptr", "outcount", "indices") + f", {site})",
            "matched_start": lambda: "checks::MatchedStartCheck(" + self.id() + ", " + a(
                "count", "datatype", "message", "request") + ", " + site + ")",
        }
        if check not in calls:
            raise SpecError(f"MPI_{self.name}: unknown check {check}")
        return calls[check]()

    def pmpi(self, name=None, args=None):
        return f"PMPI_{name or self.name}({args if args is not None else self.all_args()})"

    def via(self, i=0):
        return self.entry["via"][i]

    # A blocking call that sends a message (a send, a send-receive), or that
    # matches one it takes (a receive, a send-receive, a probe that takes its message).
    def sends_message(self):
        return self.entry.get("record") in ("send_to", "send_receive")

    def matches_message(self):
        record = self.entry.get("record")
        return self.has("status") and (record in ("receive_from", "send_receive") or
                                       (record == "probe" and self.has("message")))

    # The wait as its thread's own loop of tests (tested_wait.hpp), patient or not.
    def tested(self):
        done_by = self.entry.get("tested")
        if done_by is None:
            return None
        if done_by not in ("flag", "all", "outcount"):
            raise SpecError(f"MPI_{self.name}: tested is flag, all or outcount, not {done_by} ({SPEC_HELP})")
        count, array = self.request_array()
        return f"tested_wait(self, {count}, {array}, patient_waits<kSlow>(), {self.test_lambda(done_by)})"

    # `[&](int* done) { ... }`: the call's test form (via), setting done as the wait would return.
    def test_lambda(self, done_by):
        test = Function(self.by_name[self.via()], self.by_name, None)
        args = ", ".join("done" if role == "flag" else self.arg(role) for _, role in test.params)
        if done_by == "flag":
            return f"[&](int* done) {{ return {self.pmpi(test.name, args)}; }}"
        if done_by == "all":
            count, array = self.request_array()
            statuses = self.arg("statuses")
            return (f"[&, by_status = testall_fails_on({count}, {array})](int* done) {{ return by_status ? "
                    f"tested_by_status({count}, {array}, done, {statuses}) : {self.pmpi(test.name, args)}; }}")
        return (f"[&](int* done) {{ const int tested = {self.pmpi(test.name, args)}; "
                f"*done = *{self.arg('outcount')} != 0; return tested; }}")

    # The same wait as a nonblocking start and tests (patient_wait.hpp).
    def patient(self):
        hook = self.entry.get("patient")
        a = self.args
        if hook is None:
            return None
        if hook == "plain":
            return self.pmpi()
        if hook == "start_then_wait":
            start = "PMPI_" + self.via()
            if "sync" in self.entry:
                sync = Function(self.by_name[self.entry["sync"]], self.by_name, None)
                start = f"potential<kSlow>() ? PMPI_{sync.via()} : {start}"
            params = [(n, r) for n, r in self.params if r != "status"]
            return f"start_then_wait({start}, {a('status|=MPI_STATUS_IGNORE')}, {self.all_args(params)})"
        if hook == "receive_when_ready":
            return f"receive_when_ready({a('source', 'tag', 'comm')}, [&] {{ return {self.pmpi()}; }})"
        if hook == "send_while_receiving":
            send = self.pmpi(self.via(0), a("sendbuf", "sendcount", "sendtype", "dest", "sendtag", "comm") + ", send")
            receive = self.pmpi(self.via(1), a("recvbuf", "recvcount", "recvtype", "source", "recvtag", "comm",
                                               "status"))
            return (f"send_while_receiving(patient_waits<kSlow>(), [&](MPI_Request* send) {{ return {send}; }}, "
                    f"{a('source', 'recvtag', 'comm')},\n"
                    f"                         [&] {{ return {receive}; }},\n"
                    f"                         [&](int got) {{ matched.done(got, {a('comm')}); self.receive_done(record); }})")
        if hook == "until_done":
            return f"until_done({self.test_lambda('flag')})"
        raise SpecError(f"MPI_{self.name}: unknown patient form {hook}")

    def completed(self):
        hook = self.entry.get("completed")
        a = self.arg
        return {"flag": lambda: f"*{a('flag')}",
                "flag_and_index": lambda: f"*{a('flag')} && *{a('index')} != MPI_UNDEFINED",
                "outcount": lambda: f"*{a('outcount')} > 0"}[hook]()

    # The handle each value of `created` makes: its checks::HandleKind and the role of the parameter it is in.
    MADE_HANDLES = {"comm_from": ("Comm", "newcomm"), "comm_from_unshadowed": ("Comm", "newcomm"),
                    "comm_dup_started": ("Comm", "newcomm"), "intercomm": ("Comm", "newcomm"),
                    "comm_by_group": ("Comm", "newcomm"), "comm_from_groups": ("Comm", "newcomm"),
                    "file": ("File", "file"), "window": ("Win", "win"), "datatype": ("Datatype", "newtype"),
                    "datatype_dup": ("Datatype", "newtype"),
                    "group": ("Group", "newgroup"), "op": ("Op", "newop"), "info": ("Info", "newinfo")}

    def made_handle(self):
        """(HandleKind, parameter) of the handle a successful call makes, or None."""
        hook = self.entry.get("created")
        if hook is None:
            return None
        if hook not in self.MADE_HANDLES:
            raise SpecError(f"MPI_{self.name}: unknown created {hook} ({SPEC_HELP})")
        kind, role = self.MADE_HANDLES[hook]
        return "checks::HandleKind::" + kind, self.arg(role)

    def created(self):
        """What a successful call registers: what it created, the passive-target lock it took or released, and
        the one-sided operations it completed."""
        done = []
        if lock := self.entry.get("passive_lock"):
            done.append(f"windows::lock_{lock}({self.arg('win')})")
        if (covers := self.entry.get("completes_rma")) is not None:
            if covers not in ("window", "target", "fence"):
                raise SpecError(f"MPI_{self.name}: unknown completes_rma {covers} ({SPEC_HELP})")
            if covers == "fence":
                done.append(f"checks::rma_fenced({self.args('win', 'assertion')})")
            else:
                target = self.arg("target") if covers == "target" else "checks::kEveryTarget"
                done.append(f"checks::rma_completed({self.arg('win')}, {target})")
        if (sync := self.entry.get("rma_epoch")) is not None:
            done.append(self.rma_synchronized(sync))
        if self.entry.get("partitioned") in ("send", "receive"):
            sends = "true" if self.entry["partitioned"] == "send" else "false"
            done.append(f"partitioned_requests::made(*{self.arg('request')}, {self.arg('partitions')}, {sends})")
            done.append(f"checks::partitioned_made(*{self.arg('request')}, {self.arg('partitions')}, {sends})")
        if self.entry["kind"] == "nonblocking" and "accesses" in self.entry:
            done.append(f"checks::rma_request_issued({self.id()}, {self.target_access()}, "
                        f"{self.args('target', 'win')}, MPISENTRY_CALL_SITE)")
        if done:
            return done[0] if len(done) == 1 else "(" + ", ".join(done) + ")"
        hook = self.entry.get("created")
        if hook is None:
            return None
        a = self.arg
        name = f'"MPI_{self.name}"'
        shadow = lambda handle: f"checks::shadow_created(*{a(handle)})"
        calls = {
            "comm_from": lambda: (f"comms::created_from({a('comm')}, *{a('newcomm')}, {name}), "
                                  f"{shadow('newcomm')}"),
            "comm_from_unshadowed": lambda: f"comms::created_from({a('comm')}, *{a('newcomm')}, {name})",
            "comm_dup_started": lambda: (f"comms::created_from({a('comm')}, *{a('newcomm')}, {name}), "
                                         f"checks::shadow_dup_started({a('comm')}, *{a('newcomm')})"),
            "intercomm": lambda: f"comms::created_intercomm({a('tag')}, *{a('newcomm')}), {shadow('newcomm')}",
            "comm_by_group": lambda: (f"comms::created_by_group({a('comm')}, {a('tag')}, *{a('newcomm')}), "
                                      f"{shadow('newcomm')}"),
            "comm_from_groups": lambda: (f"comms::created_from_groups({a('stringtag')}, *{a('newcomm')}, {name}), "
                                         f"{shadow('newcomm')}"),
            "file": lambda: f"comms::opened_file({a('comm')}, *{a('file')})",
            "window": lambda: (f"windows::created({a('comm')}, *{a('win')}), "
                               f"checks::rma_window_created({a('comm')}, *{a('win')}, MPISENTRY_CALL_SITE)"),
        }
        if hook not in calls:
            raise SpecError(f"MPI_{self.name}: created {hook} is for local functions only ({SPEC_HELP})")
        kind, handle = self.made_handle()
        return f"({calls[hook]()}, checks::made({kind}, *{handle}, {self.id()}, MPISENTRY_CALL_SITE))"

    def target_access(self):
        """The checks::TargetAccess of a one-sided operation: what it does at the target, and with which
        operation when it is an accumulate."""
        kind, *target_part = self.entry["accesses"]
        if kind not in ("write", "read", "atomic"):
            raise SpecError(f"MPI_{self.name}: unknown accesses {kind} ({SPEC_HELP})")
        # An atomic operation without an op parameter is MPI_Compare_and_swap's kind: it swaps.
        op = (f", {self.arg('op')}" if self.has("op") else ", MPI_OP_NULL, true") if kind == "atomic" else ""
        return f"checks::TargetAccess{{checks::AccessKind::{kind.capitalize()}, {self.args(*target_part)}{op}}}"

    # What each rma_epoch value passes: its checks::RmaSync, and whether it names a target, a lock type, a group.
    RMA_SYNCS = {"lock": ("Lock", True, True, False), "lock_all": ("LockAll", False, False, False),
                 "unlock": ("Unlock", True, False, False), "unlock_all": ("UnlockAll", False, False, False),
                 "flush": ("Flush", True, False, False), "flush_all": ("FlushAll", False, False, False),
                 "start": ("Start", False, False, True), "complete": ("Complete", False, False, False),
                 "post": ("Post", False, False, True), "wait": ("Wait", False, False, False)}

    def rma_synchronized(self, sync):
        if sync not in self.RMA_SYNCS:
            raise SpecError(f"MPI_{self.name}: unknown rma_epoch {sync} ({SPEC_HELP})")
        name, target, lock_type, group = self.RMA_SYNCS[sync]
        call = (f"checks::rma_synchronized({self.arg('win')}, checks::RmaSync::{name}, "
                f"{self.arg('target') if target else 'checks::kEveryTarget'}, "
                f"{self.arg('lock_type') if lock_type else '0'}, {self.arg('group') if group else 'MPI_GROUP_NULL'})")
        if self.entry["kind"] == "polling":  # MPI_Win_test: only when it ended the epoch
            call = f"(({self.completed()}) ? {call} : (void)0)"
        return call

    def local_body(self):
        """The one statement of a local function's wrapper: the call, and the handle it makes or frees or the
        buffers of the one-sided operation it starts."""
        if (kind := self.entry.get("freed")) is not None:
            if len(self.params) != 1:
                raise SpecError(f"MPI_{self.name}: a function that frees takes the handle only ({SPEC_HELP})")
            return f"checks::freed_by(PMPI_{self.name}, checks::HandleKind::{kind}, {self.params[0][0]})"
        if self.entry.get("partitioned") == "ready":
            a, has = self.arg, self.has
            low = a("partition") if has("partition") else a("partition_low") if has("partition_low") else "0"
            high = a("partition") if has("partition") else a("partition_high") if has("partition_high") else "-1"
            listed = f"{a('array_of_partitions')}, {a('length')}" if has("length") else "nullptr, 0"
            named = "List" if has("length") else "One" if has("partition") else "Range"
            count = a("length") if has("length") else "1" if has("partition") else f"{high} - {low} + 1"
            return (f"(readied_partitions({a('request')}, {count}), checks::partitions_readied({self.id()}, "
                    f"checks::PartitionsNamed::{named}, {a('request')}, {low}, {high}, {listed}, MPISENTRY_CALL_SITE), "
                    f"{self.pmpi()})")
        if "reads" in self.entry or "writes" in self.entry:
            part = lambda key: "{" + self.args(*self.entry[key]) + "}" if key in self.entry else "{}"
            if "accesses" not in self.entry:
                raise SpecError(f"MPI_{self.name}: a one-sided operation says what it does at the target (accesses) "
                                f"({SPEC_HELP})")
            access = self.target_access()
            return (f"checks::rma_issued({self.pmpi()}, {self.id()}, {part('reads')}, {part('writes')}, {access}, "
                    f"{self.args('target', 'win')}, MPISENTRY_CALL_SITE)")
        made = self.made_handle()
        if made is None:
            raise SpecError(f"MPI_{self.name}: a local function is wrapped for a handle it makes (created), "
                            f"frees (freed) or a one-sided operation's buffers (reads, writes) ({SPEC_HELP})")
        kind, handle = made
        made_by = f"checks::made_by({self.pmpi()}, {kind}, {handle}, {self.id()}, MPISENTRY_CALL_SITE)"
        hook = self.entry["created"]
        if hook in ("datatype", "datatype_dup"):
            # A new datatype is not committed; a duplicate is as its original (LOCAL:ARGUMENT:UNCOMMITTED).
            like = self.arg("oldtype") if hook == "datatype_dup" else "MPI_DATATYPE_NULL"
            return f"checks::datatype_made({made_by}, {handle}, {like})"
        return made_by

    # The recorded or replayed outcome (interceptors/outcomes.hpp) around the call's body, for the
    # Wait, Test and Iprobe calls.
    COMPLETIONS = {"wait", "test", "any", "some"}

    def outcome(self):
        return self.entry.get("outcome")

    def outcome_wrapped(self, body, indent):
        outcome = self.outcome()
        lambda_ = f"[&] {{ return {body}; }}"
        if outcome == "poll":
            return (f"outcomes::poll_outcome<kSlow>(self, record, patient_waits<kSlow>(), {self.id()}, "
                    f"{self.args('source', 'tag', 'comm', 'flag', 'status')},\n"
                    f"{indent}  {lambda_})")
        if outcome not in self.COMPLETIONS:
            return body
        a = self.arg
        kind = {"wait": "Test", "test": "Test", "any": "Any", "some": "Some"}[outcome]
        if self.has("requests"):
            count, requests = a("count"), a("requests")
        else:
            count, requests = "1", self.request_variable()
        statuses = a("statuses|status")
        layout = ("PerCompleted" if outcome == "some" else "PerRequest") if self.has("statuses") else "One"
        outputs = ", ".join(a(role + "|=nullptr") for role in ("flag", "index", "outcount", "indices"))
        deactivates = "" if self.entry.get("check") != "complete_one_kept" else ", false"
        call = (f"Completion{{{self.id()}, {'false' if outcome == 'wait' else 'true'}, races::Kind::{kind}, {count}, "
                f"{requests}, {statuses}, Completion::Layout::{layout}, {outputs}{deactivates}}}")
        return f"outcomes::completion_outcome<kSlow>(self, patient_waits<kSlow>(), {call},\n{indent}  {lambda_})"

    def request_variable(self):
        """A variable holding the address of the one request (MPI_Request_get_status takes the handle itself)."""
        address = self.request_address()
        return "request_address" if address.startswith("&") else address

    def partition_lines(self):
        """What the wrapper of a partitioned request's init, or of MPI_Parrived, says before its call (the
        LOCAL:PARTITION checks)."""
        kind = self.entry.get("partitioned")
        if kind is None:
            return []
        if kind in ("send", "receive"):
            peer = "dest" if kind == "send" else "source"
            return [f"if (kSlow) checks::partitioned_init({'true' if kind == 'receive' else 'false'}, "
                    f"{self.args('partitions', peer, 'tag')}, MPISENTRY_CALL_SITE);"]
        if kind == "arrived":
            return [f"if (kSlow) checks::partition_asked({self.args('request', 'partition')}, MPISENTRY_CALL_SITE);"]
        raise SpecError(f"MPI_{self.name}: unknown partitioned {kind} ({SPEC_HELP})")

    def completing_lines(self):
        """A Wait's or Test's claim on its requests while it completes them (LOCAL:THREAD:CONCURRENT_REQUEST);
        MPI_Request_get_status completes nothing."""
        if self.entry.get("check") not in ("complete_one", "complete_all", "complete_any", "complete_some"):
            return []
        return [f"const SlowOnly<kSlow, checks::CompletingRequests> completing({self.id()}, "
                f"{', '.join(self.request_array())}, MPISENTRY_CALL_SITE);"]

    # The roles whose values MPI defines as erroneous (checks/arguments), by the parameter's type: a role
    # given a pointer (MPI_Comm_free's comm) is not judged. Each datatype comes after its count, which the
    # judge reads for it.
    ARGUMENT_ROLES = [("comm", "MPI_Comm", "Comm"), ("dest", "int", "Dest"), ("source", "int", "Source"),
                      ("root", "int", "Root"), ("tag", "int", "Tag"), ("sendtag", "int", "Tag"),
                      ("recvtag", "int", "ReceiveTag"), ("count", "int", "Count"), ("count", "MPI_Count", "Count"),
                      ("datatype", "MPI_Datatype", "Datatype"),
                      ("sendcount", "int", "Count"), ("sendcount", "MPI_Count", "Count"),
                      ("sendtype", "MPI_Datatype", "Datatype"),
                      ("recvcount", "int", "Count"), ("recvcount", "MPI_Count", "Count"),
                      ("recvtype", "MPI_Datatype", "Datatype"),
                      ("origin_count", "int", "Count"), ("origin_count", "MPI_Count", "Count"),
                      ("origin_datatype", "MPI_Datatype", "Datatype"),
                      ("target_count", "int", "Count"), ("target_count", "MPI_Count", "Count"),
                      ("target_datatype", "MPI_Datatype", "Datatype"), ("op", "MPI_Op", "Op")]
    # Whose tag may be MPI_ANY_TAG, and every call whose tag is a message's.
    RECEIVING_RECORDS = ("receive_from", "probe")
    MESSAGE_RECORDS = RECEIVING_RECORDS + ("send_to", "send_receive")

    def argument_lines(self):
        """The argument checks before the call (LOCAL:ARGUMENT): the screen of each argument, then, for a call that
        fails it, the judge over them all, the communicator first (the ranks are judged on it)."""
        screens, items = [], []
        comm = None
        for role, type_, kind in self.ARGUMENT_ROLES:
            if not self.has(role) or not self.declarations:
                continue
            if role in ("sendcount", "recvcount", "sendtype", "recvtype") and self.has("root"):
                continue  # significant at the root only, or at the others only
            if kind == "Tag" and self.entry.get("record") not in self.MESSAGE_RECORDS:
                continue  # a communicator constructor's tag, significant at its leaders only
            name = self.arg(role)
            if not self.is_scalar(name, (type_,)):
                continue
            if kind == "Tag" and role == "tag" and self.entry.get("record") in self.RECEIVING_RECORDS:
                kind = "ReceiveTag"
            if kind == "Comm":
                comm = name
                screens.append(f"checks::screen::comm({name})")
                items.append(f'checks::comm_argument("{name}", {name})')
            elif kind == "Datatype":
                value = self.beside_in_place(role, name, "MPI_BYTE")  # ignored: judged as a valid one
                screens.append(f"checks::screen::datatype({value})")
                items.append(f'checks::datatype_argument("{name}", {value})')
            elif kind == "Op":
                screens.append(f"checks::screen::op({name})")
                items.append(f'checks::op_argument("{name}", {name})')
            else:
                value = self.beside_in_place(role, name, "0")
                screen = {"Dest": "dest", "Source": "source", "Root": "root", "Tag": "tag",
                          "ReceiveTag": "receive_tag", "Count": "count"}[kind]
                if kind in ("Dest", "Source", "Root"):
                    screens.append(f"checks::screen::{screen}({value}, {comm or 'MPI_COMM_NULL'})")
                else:
                    screens.append(f"checks::screen::{screen}({value})")
                items.append(f'checks::int_argument(checks::Argument::Role::{kind}, "{name}", {value})')
        buffer_screens, buffer_items = self.buffer_arguments()
        screens += buffer_screens
        items += buffer_items
        if not items:
            return []
        return [f"if (checks::watching_arguments() && ({' || '.join(screens)})) [[unlikely]]",
                f"  checks::judge_arguments({self.id()}, {{{', '.join(items)}}}, MPISENTRY_CALL_SITE);"]

    # The buffer each send or receive count and datatype describes.
    BUFFER_OF = {"sendcount": "sendbuf", "sendtype": "sendbuf", "recvcount": "recvbuf", "recvtype": "recvbuf"}

    def beside_in_place(self, role, name, ignored):
        """The argument `name` of `role` as judged: `ignored` where its buffer is MPI_IN_PLACE, which MPI reads
        instead of the buffer's count and datatype."""
        buffer = self.BUFFER_OF.get(role)
        if buffer is None or not self.has(buffer):
            return name
        return f"({self.arg(buffer)} == MPI_IN_PLACE ? {ignored} : {name})"

    def is_scalar(self, name, type_names):
        """Whether parameter `name` is one value (not a pointer or an array) of one of these types."""
        declaration = self.declaration_of(name)
        return "*" not in declaration and "[" not in declaration and \
            declaration.rsplit(" ", 1)[0].strip() in type_names

    # A buffer's count and datatype, by role: the first of each that the function has as one value.
    BUFFER_ROLES = [("buf", "count", "datatype"), ("sendbuf", "sendcount|count", "sendtype|datatype"),
                    ("recvbuf", "recvcount|count", "recvtype|datatype")]

    def scalar(self, roles, type_names):
        """The parameter of the first of `roles` ("a|b") that the function has as one value of these types."""
        for role in roles.split("|"):
            if self.has(role):
                return self.arg(role) if self.is_scalar(self.arg(role), type_names) else None
        return None

    def buffer_arguments(self):
        """The screens and judged arguments of a point-to-point call's buffers, and of a collective's that has no
        root (a rooted one's buffers are significant at the root only, or at the others only): a null buffer
        with data, MPI_IN_PLACE where MPI does not allow it (every point-to-point buffer, a collective's receive
        buffer, a neighborhood collective's send buffer), and a send buffer that is the receive buffer."""
        pattern = self.entry.get("pattern")
        point_to_point = self.entry.get("record") in self.MESSAGE_RECORDS
        if not self.declarations or not (point_to_point or (pattern and pattern != "barrier" and not self.has("root"))):
            return [], []
        screens, items = [], []
        for role, count_roles, type_roles in self.BUFFER_ROLES:
            if not self.has(role):
                continue
            name = self.arg(role)
            count = self.scalar(count_roles, ("int", "MPI_Count")) or "-1"  # -1: counts per rank, not judged
            datatype = self.scalar(type_roles, ("MPI_Datatype",)) or "MPI_DATATYPE_NULL"
            in_place = not point_to_point and role == "sendbuf" and pattern != "neighborhood"
            kind = "InPlaceBuffer" if in_place else "Buffer"
            screens.append(f"checks::screen::{'in_place_buffer' if in_place else 'buffer'}({name}, {count})")
            items.append(f'checks::buffer_argument(checks::Argument::Role::{kind}, "{name}", {name}, {count}, '
                         f'{datatype})')
        if self.has("sendbuf") and self.has("recvbuf"):
            screens.append(f"checks::screen::aliased({self.arg('sendbuf')}, {self.arg('recvbuf')})")
        return screens, items

    def outcome_lines(self, start):
        """What the wrapper says before the call's record, and after its call, for its outcome."""
        outcome = self.outcome()
        site = "MPISENTRY_CALL_SITE"
        if outcome in ("receive", "probe"):
            kind = "races::Kind::" + ("Receive" if outcome == "receive" else "Probe")
            status = "" if start else ", " + self.arg("status")
            after = f"outcome.started(result, *{self.arg('request')});" if start else "outcome.done(result);"
            where = self.args("source", "tag|recvtag", "comm")
            return [f"const SlowOnly<kSlow, races::SourceOutcome> outcome({kind}, {self.id()}, {where}{status}, {site});"], [after]
        if outcome == "persistent_receive":
            return [f"if (kSlow) races::persistent_wildcard({self.arg('source')});"], []
        if outcome in self.COMPLETIONS and not self.has("requests") and self.request_variable() == "request_address":
            return [f"MPI_Request* request_address = {self.request_address()};"], []
        if outcome not in (None, "poll") and outcome not in self.COMPLETIONS:
            raise SpecError(f"MPI_{self.name}: unknown outcome {outcome} ({SPEC_HELP})")
        return [], []

    def forward_text(self, indent):
        """The forwarded call, with the outcome and the check object around it, one alternative a line."""
        alternatives = []
        tested = self.tested()
        if tested is not None:
            tested = self.outcome_wrapped(tested, indent)
            return self.checked(self.check(), f"\n{indent}{tested}")
        patient = self.patient()
        if patient is not None and self.entry.get("patient") != "plain":
            # A send-receive runs as its halves whether patient or not, so that the monitor knows which is done.
            halves = self.entry.get("patient") == "send_while_receiving"
            condition = "true" if halves else "patient_waits<kSlow>()"
            if self.has("comm"):
                # A call on MPI_COMM_NULL fails at once, and its error must be MPI's answer to the program's own
                # call: Open MPI treats an MPI_Iprobe on MPI_COMM_NULL as fatal where MPI_Recv returns the error.
                condition = (f"{self.arg('comm')} != MPI_COMM_NULL" if halves
                         else condition + f" && {self.arg('comm')} != MPI_COMM_NULL")
            alternatives.append((condition, patient.replace("\n", "\n" + indent)))
        if "sync" in self.entry:
            alternatives.append(("potential<kSlow>()", self.pmpi(self.entry["sync"])))
        plain = self.pmpi()
        check = self.check()
        if not alternatives:
            return self.checked(check, self.outcome_wrapped(plain, indent))
        lines = [f"{alternatives[0][0]} ? {alternatives[0][1]}"]
        lines += [f": {condition} ? {call}" for condition, call in alternatives[1:]]
        lines += [f": {plain}"]
        body = self.outcome_wrapped(("\n" + indent).join(lines), indent)
        return self.checked(check, f"\n{indent}{body}")

    @staticmethod
    def checked(check, call):
        """`call` as the argument of the check object's done(), after the check's own arguments for done() if it
        has them (a pair: the object, those arguments), in the slow body; `call` alone in the fast one."""
        if check is None:
            return call.lstrip()
        checked = f"{check[0]}.done({call}, {check[1]})" if isinstance(check, tuple) else f"{check}.done({call})"
        return f"kSlow ? {checked}\n      : {call.lstrip()}"

    def converted(self):
        return "potential<kSlow>()" if "sync" in self.entry else "false"

    def parts(self):
        """What the wrapper is made of: the pieces wrapper_text lays out."""
        kind = self.entry["kind"]
        start = kind in ("nonblocking", "persistent")
        return {
            "wrapper": "start" if start else "waiting",
            "describe": self.record(),
            "converted": self.converted(),
            "polls": kind == "polling",
            "completed": self.completed() if kind == "polling" else "true",
            "request": self.arg("request") if start else None,
            "created": self.created() or "(void)0",
            "tested": "tested" in self.entry,
        }


# ---------------------------------------------------------------------------
# Output


def wrapper_text(fn, spec_name, spec_line):
    params = ", ".join(fn.declarations)
    lines = [f"// MPI_{fn.name}: {spec_name} line {spec_line}",
             f"MPISENTRY_API int MPI_{fn.name}({params}) {{"]
    if fn.entry["kind"] == "local":
        # Neither waits nor starts a request: not recorded, no delay injected.
        return "\n".join(lines + ["  " + line for line in fn.argument_lines()] +
                         [f"  return {fn.local_body()};", "}", ""])
    p = fn.parts()
    wrapper = lines[1]
    # The body is given the program's call site: in the slow body, out of line, the return address is the wrapper's.
    lines[1:] = ["namespace wrapped {", "template <bool kSlow>",
                 f"[[gnu::always_inline]] inline int {fn.name}([[maybe_unused]] const void* call_site, {params}) {{",
                 "  const ScopedCall<kSlow> scope;"]
    forward = fn.forward_text(" " * 6)
    before, after = fn.outcome_lines(p["wrapper"] == "start")
    lines += ["  " + line for line in fn.argument_lines() + before + fn.partition_lines() + fn.completing_lines()]
    if p["wrapper"] == "waiting":
        lines += [f"  CallRecord record = {p['describe']};"]
        # The messages it sends and matches, for the monitor's account of what is in flight.
        if fn.sends_message():
            lines += ["  count_sent(record);"]
        if fn.matches_message():
            lines += [f"  MatchedMessage matched({fn.arg('status')});"]
        if fn.entry.get("patient") == "send_while_receiving":
            lines += [f"  if ({fn.arg('comm')} != MPI_COMM_NULL) record.halves = Halves::ReceivePending;"]
        if p["converted"] != "false":
            lines += [f"  record.converted_send = {p['converted']};"]
        if p["tested"]:
            lines += ["  record.tests_requests = true;"]
        lines += [f"  ThreadState& self = enter_call(record, {fn.id()});"]
        logged = fn.logged_requests()
        if p["polls"] and logged:
            lines += [f"  const SlowOnly<kSlow, comm_log::Poll> logged(record, {logged}, MPISENTRY_CALL_SITE);"]
        elif not p["polls"]:
            lines += [f"  if (kSlow && comm_log::on()) comm_log::call(record, {logged or '0, nullptr'}, MPISENTRY_CALL_SITE);"]
        lines += [f"  const int result = {forward};"]
        if fn.matches_message():
            found = f", *{fn.arg('flag')}" if fn.has("flag") else ""
            lines += [f"  matched.done(result, {fn.arg('comm')}{found});"]
        if p["created"] != "(void)0":
            lines += ["  if (result == MPI_SUCCESS)", f"    {p['created']};", "  else if (kSlow)",
                      "    checks::call_failed(record, result);"]
        else:
            lines += ["  if (kSlow && result != MPI_SUCCESS) checks::call_failed(record, result);"]
        lines += ["  " + line for line in after]
        if p["polls"]:
            if logged:
                lines += [f"  logged.done(result == MPI_SUCCESS && ({p['completed']}));"]
            lines += [f"  self.leave(result == MPI_SUCCESS && ({p['completed']}));"]
        else:
            lines += ["  self.leave(true);"]
    else:
        request = p["request"]
        lines += [f"  const int result = {forward};",
                  "  if (result == MPI_SUCCESS) {",
                  f"    CallRecord record = {p['describe']};"]
        if p["converted"] != "false":
            lines += [f"    record.converted_send = {p['converted']};"]
        lines += [f"    record.function = {fn.id()};",
                  f"    started_request(*{request}, record);",
                  f"    if (kSlow && comm_log::on()) comm_log::started(*{request}, record, MPISENTRY_CALL_SITE);",
                  f"    if (kSlow && checks::tracking()) checks::started(*{request}, record, MPISENTRY_CALL_SITE);",
                  f"    if (kSlow && checks::watching_completions()) checks::request_made({request});"]
        if p["created"] != "(void)0":
            lines += [f"    {p['created']};"]
        lines += ["  } else if (kSlow && checks::on(report::Check::CallFailed)) {",
                  f"    CallRecord record = {p['describe']};",
                  f"    record.function = {fn.id()};",
                  "    checks::call_failed(record, result);",
                  "  }"]
        lines += ["  " + line for line in after]
        lines += ["  this_thread_state().count_start();"]
    args = "MPISENTRY_CALL_SITE, " + fn.all_args()
    lines = [line.replace("MPISENTRY_CALL_SITE", "call_site") for line in lines]
    lines += ["  return result;", "}", "}  // namespace wrapped", wrapper,
              f"  if (slow_paths::any()) [[unlikely]] return out_of_line<wrapped::{fn.name}<true>>({args});",
              f"  return wrapped::{fn.name}<false>({args});", "}", ""]
    return "\n".join(lines)


def enum_name(value):
    return "".join(part.capitalize() for part in value.split("_"))


def arguments(f):
    """The Argument bits of the roles among f's parameters (api/functions.hpp)."""
    roles = {role for _, role in parse_params(f)}
    bits = [bit for role, bit in (("group", "kGroupArgument"), ("lock_type", "kLockTypeArgument"),
                                  ("assertion", "kAssertionArgument"), ("message", "kMessageArgument"))
            if role in roles]
    return " | ".join(bits) if bits else "0"


def table_line(f):
    kind = {"blocking": "Blocking", "polling": "Polling", "nonblocking": "Nonblocking",
            "persistent": "Nonblocking", "local": "None"}[f["kind"]]
    form = {"blocking": "Blocking", "polling": "Blocking", "nonblocking": "Nonblocking",
            "persistent": "Persistent", "local": "Blocking"}[f["kind"]]
    pattern = enum_name(f.get("pattern", "none"))
    waits = enum_name(f.get("waits", "may_wait"))
    completes = {"complete_one": "One", "complete_all": "All", "complete_any": "Any",
                 "complete_some": "Some"}.get(f.get("check"), "None")
    return (f'    {{"MPI_{f["name"]}", CallKind::{kind}, Form::{form}, Pattern::{pattern}, WaitRule::{waits}, '
            f'Completes::{completes}, SendMode::{enum_name(f.get("mode", "standard"))}, '
            f'WindowSync::{enum_name(f.get("synchronizes", "none"))}, {arguments(f)}, '
            f'FunctionId::{f["plain"]}, FunctionId::{f["family"]}, {"true" if f["large"] else "false"}}},')


def write_if_changed(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.exists(path):
        with open(path) as f:
            if f.read() == text:
                return
    with open(path, "w") as f:
        f.write(text)


def spec_lines(path):
    """The line of the spec where each function's entry starts."""
    lines = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            m = re.search(r'"name":\s*"(\w+)"', line)
            if m:
                lines.setdefault(m.group(1), number)
    return lines


def build(spec_path, header_paths):
    _, functions = load_spec(spec_path)
    entries = expand(functions)
    by_name = {e["name"]: e for e in entries}
    protos = read_prototypes(header_paths)
    where = spec_lines(spec_path)
    wrapped, skipped = [], []
    for e in entries:
        if e.get("wrapper") == "by_hand":
            continue
        if e["name"] not in protos:
            skipped.append(e["name"])
            continue
        fn = Function(e, by_name, protos[e["name"]])
        wrapped.append((fn, where[e["plain"]]))
    return entries, wrapped, skipped


GENERATED = "// Generated by src/api/generate_api.py from src/api/mpi_api.json: do not edit.\n"


def main():
    # "table": the FunctionId enumeration and the function table, for src/api;
    # "wrappers": the wrappers' definitions, for src/interceptors.
    spec_path, mode, out_dir, header_paths = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    if mode not in ("table", "wrappers"):
        sys.exit(f"generate_api.py: the second argument is table or wrappers, not {mode!r}")
    try:
        entries, wrapped, skipped = build(spec_path, header_paths)
    except SpecError as e:
        sys.exit(f"{spec_path}: {e}")
    if mode == "table":
        for name in skipped:
            print(f"mpisentry: MPI_{name} is not in the MPI headers: not wrapped")
        ids = GENERATED + "".join(f"  {e['name']},\n" for e in entries)
        table = GENERATED + "".join(table_line(e) + "\n" for e in entries)
        write_if_changed(os.path.join(out_dir, "api", "function_ids.inc"), ids)
        write_if_changed(os.path.join(out_dir, "api", "function_table.inc"), table)
    else:
        wrappers = GENERATED + "\n" + "\n".join(
            wrapper_text(fn, os.path.basename(spec_path), line) for fn, line in wrapped)
        write_if_changed(os.path.join(out_dir, "interceptors", "mpi_wrappers.inc"), wrappers)


if __name__ == "__main__":
    main()
