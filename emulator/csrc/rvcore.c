/* CPython binding of the rlcc RISC-V interpreter: type _rvcore.Core. The Python layer
 * (rlcc.emulator.machine) validates arguments and turns halt/fault codes into results/errors. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rv.h"

/* Instructions between checks for pending signals (Ctrl-C) during run(): ~10-50 ms. */
#define SIGNAL_CHECK_INTERVAL (1ull << 22)

typedef struct {
    PyObject_HEAD
    rv_state s;
    Py_ssize_t exports; /* live buffer views of mem: RAM must not be reallocated under them */
    int running;        /* run() is executing with the GIL released */
} CoreObject;

/* Refuse state changes while another thread runs the core (they would race with the interpreter). */
static int busy(CoreObject *self) {
    if (self->running) {
        PyErr_SetString(PyExc_RuntimeError, "machine is already running (run() in another thread)");
        return 1;
    }
    return 0;
}

static void Core_dealloc(CoreObject *self) {
    free(self->s.mem);
    rv_blocks_free(&self->s);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int Core_init(CoreObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"xlen", "mem_base", "mem_size", "zbb", NULL};
    int xlen = 64, zbb = 0;
    unsigned long long base = 0x10000, size = 4u << 20;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|iKKp", kwlist, &xlen, &base, &size, &zbb)) return -1;
    if (busy(self)) return -1;
    if (self->exports > 0) {
        PyErr_SetString(PyExc_BufferError, "cannot re-initialise a Core while memory views of it exist");
        return -1;
    }
    if (xlen != 32 && xlen != 64) {
        PyErr_SetString(PyExc_ValueError, "xlen must be 32 or 64");
        return -1;
    }
    if (size < 16 || size > (1ull << 32) || (size & 7) || (base & 7)) {
        PyErr_SetString(PyExc_ValueError, "mem_size must be 16 B..4 GiB and mem_base/mem_size multiples of 8");
        return -1;
    }
    if ((xlen == 32 && base + size > (1ull << 32)) || base + size < base) {
        PyErr_SetString(PyExc_ValueError, "RAM region does not fit the address space");
        return -1;
    }
    free(self->s.mem);
    rv_blocks_free(&self->s);
    memset(&self->s, 0, sizeof self->s);
    self->s.last_rd = RV_SINK;
    self->s.xlen = xlen;
    self->s.zbb = zbb;
    self->s.base = base;
    self->s.size = size;
    self->s.mem = calloc(size, 1);
    if (!self->s.mem || rv_blocks_init(&self->s) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    self->s.pc = base;
    self->s.sp_min = UINT64_MAX;
    for (int i = 0; i < COST_COUNT; i++) self->s.cost[i] = 1;
    self->s.clock_hz = 1000000000ull;
    self->s.timebase_hz = 1000000000ull;
    return 0;
}

static int range_ok(rv_state *s, unsigned long long addr, unsigned long long n) {
    return addr >= s->base && addr - s->base <= s->size && n <= s->size - (addr - s->base);
}

static PyObject *range_error(rv_state *s, unsigned long long addr, unsigned long long n) {
    /* PyErr_Format has no %llx before Python 3.12: format with snprintf */
    char msg[160];
    snprintf(msg, sizeof msg, "[0x%llx, 0x%llx) is outside RAM [0x%llx, 0x%llx)", addr, addr + n,
             (unsigned long long)s->base, (unsigned long long)(s->base + s->size));
    PyErr_SetString(PyExc_IndexError, msg);
    return NULL;
}

static PyObject *Core_read_mem(CoreObject *self, PyObject *args) {
    unsigned long long addr, n;
    if (!PyArg_ParseTuple(args, "KK", &addr, &n)) return NULL;
    if (!range_ok(&self->s, addr, n)) return range_error(&self->s, addr, n);
    return PyBytes_FromStringAndSize((const char *)self->s.mem + (addr - self->s.base), (Py_ssize_t)n);
}

static PyObject *Core_write_mem(CoreObject *self, PyObject *args) {
    unsigned long long addr;
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "Ky*", &addr, &buf)) return NULL;
    if (busy(self)) {
        PyBuffer_Release(&buf);
        return NULL;
    }
    unsigned long long n = (unsigned long long)buf.len;
    if (!range_ok(&self->s, addr, n)) {
        PyBuffer_Release(&buf);
        return range_error(&self->s, addr, n);
    }
    uint64_t off = addr - self->s.base;
    rv_state *s = &self->s;
    /* Only drop the decoded blocks if bytes of decoded instructions actually change (restoring
     * the same image before every batch keeps the block cache warm). */
    uint64_t lo = off > s->code_lo ? off : s->code_lo;
    uint64_t hi = off + n < s->code_hi ? off + n : s->code_hi;
    int changed = lo < hi && memcmp(s->mem + lo, (const char *)buf.buf + (lo - off), hi - lo) != 0;
    memcpy(s->mem + off, buf.buf, n);
    PyBuffer_Release(&buf);
    if (changed && rv_code_hit(s, off, n)) rv_blocks_flush(s);
    Py_RETURN_NONE;
}

/* Read-only buffer protocol: a memoryview made from it holds a reference to the Core, so RAM
 * outlives every view (PyMemoryView_FromMemory would not keep it alive). */
static int Core_getbuffer(CoreObject *self, Py_buffer *view, int flags) {
    if (!self->s.mem) {
        PyErr_SetString(PyExc_BufferError, "Core has no RAM (not initialised)");
        view->obj = NULL;
        return -1;
    }
    if (PyBuffer_FillInfo(view, (PyObject *)self, self->s.mem, (Py_ssize_t)self->s.size, 1, flags) < 0) return -1;
    self->exports++;
    return 0;
}

static void Core_releasebuffer(CoreObject *self, Py_buffer *Py_UNUSED(view)) { self->exports--; }

static PyBufferProcs Core_as_buffer = {
    .bf_getbuffer = (getbufferproc)Core_getbuffer,
    .bf_releasebuffer = (releasebufferproc)Core_releasebuffer,
};

static PyObject *Core_memory(CoreObject *self, PyObject *Py_UNUSED(ignored)) {
    return PyMemoryView_FromObject((PyObject *)self);
}

static PyObject *Core_get_reg(CoreObject *self, PyObject *arg) {
    long i = PyLong_AsLong(arg);
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (i < 0 || i > 31) return PyErr_Format(PyExc_IndexError, "register index %ld out of range 0..31", i);
    return PyLong_FromUnsignedLongLong(self->s.x[i]);
}

static PyObject *Core_set_reg(CoreObject *self, PyObject *args) {
    int i;
    PyObject *v;
    if (!PyArg_ParseTuple(args, "iO", &i, &v)) return NULL;
    if (i < 0 || i > 31) return PyErr_Format(PyExc_IndexError, "register index %d out of range 0..31", i);
    if (busy(self)) return NULL;
    unsigned long long u = PyLong_AsUnsignedLongLongMask(v);
    if (u == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
    if (self->s.xlen == 32) u &= 0xffffffffull;
    if (i != 0) self->s.x[i] = u;
    Py_RETURN_NONE;
}

static PyObject *Core_get_regs(CoreObject *self, PyObject *Py_UNUSED(ignored)) {
    PyObject *t = PyTuple_New(32);
    if (!t) return NULL;
    for (int i = 0; i < 32; i++) {
        PyObject *v = PyLong_FromUnsignedLongLong(self->s.x[i]);
        if (!v) { Py_DECREF(t); return NULL; }
        PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

static PyObject *Core_set_costs(CoreObject *self, PyObject *args) {
    PyObject *seq;
    unsigned long long clock_hz, timebase_hz;
    if (!PyArg_ParseTuple(args, "OKK", &seq, &clock_hz, &timebase_hz)) return NULL;
    if (busy(self)) return NULL;
    PyObject *fast = PySequence_Fast(seq, "costs must be a sequence");
    if (!fast) return NULL;
    if (PySequence_Fast_GET_SIZE(fast) != COST_COUNT) {
        Py_DECREF(fast);
        return PyErr_Format(PyExc_ValueError, "expected %d costs", COST_COUNT);
    }
    uint32_t c[COST_COUNT];
    for (int i = 0; i < COST_COUNT; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        if (v == -1 && PyErr_Occurred()) { Py_DECREF(fast); return NULL; }
        if (v < 0 || v > 1000000) { Py_DECREF(fast); return PyErr_Format(PyExc_ValueError, "cost %ld out of range", v); }
        c[i] = (uint32_t)v;
    }
    Py_DECREF(fast);
    if (clock_hz == 0 || timebase_hz == 0) {
        PyErr_SetString(PyExc_ValueError, "clock_hz and timebase_hz must be > 0");
        return NULL;
    }
    memcpy(self->s.cost, c, sizeof c);
    rv_blocks_flush(&self->s); /* blocks hold costs folded in */
    self->s.clock_hz = clock_hz;
    self->s.timebase_hz = timebase_hz;
    Py_RETURN_NONE;
}

/* Runs in slices of SIGNAL_CHECK_INTERVAL instructions with the GIL released; between slices a
 * pending signal (Ctrl-C) raises its exception, leaving the core resumable at the current pc. */
static PyObject *Core_run(CoreObject *self, PyObject *arg) {
    unsigned long long limit = PyLong_AsUnsignedLongLong(arg);
    if (limit == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
    if (busy(self)) return NULL;
    rv_state *s = &self->s;
    int halt;
    s->fault_kind = FAULT_NONE;
    self->running = 1;
    for (;;) {
        uint64_t stop = limit;
        if (s->instret < limit && limit - s->instret > SIGNAL_CHECK_INTERVAL) stop = s->instret + SIGNAL_CHECK_INTERVAL;
        Py_BEGIN_ALLOW_THREADS
        halt = s->xlen == 32 ? rv_run32(s, stop) : rv_run64(s, stop);
        Py_END_ALLOW_THREADS
        if (halt != HALT_LIMIT || stop == limit) break;
        if (PyErr_CheckSignals() < 0) {
            self->running = 0;
            return NULL;
        }
    }
    self->running = 0;
    return PyLong_FromLong(halt);
}

static PyObject *Core_set_stack_guard(CoreObject *self, PyObject *arg) {
    unsigned long long lo = PyLong_AsUnsignedLongLong(arg);
    if (lo == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
    if (busy(self)) return NULL;
    self->s.stack_lo = lo;
    self->s.sp_min = UINT64_MAX;
    Py_RETURN_NONE;
}

static PyObject *Core_fault(CoreObject *self, PyObject *Py_UNUSED(ignored)) {
    return Py_BuildValue("(iKKk)", self->s.fault_kind, (unsigned long long)self->s.fault_pc,
                         (unsigned long long)self->s.fault_addr, (unsigned long)self->s.fault_insn);
}

static PyObject *Core_stats(CoreObject *self, PyObject *Py_UNUSED(ignored)) {
    PyObject *t = PyTuple_New(CLS_COUNT + 2);
    if (!t) return NULL;
    for (int i = 0; i < CLS_COUNT; i++) PyTuple_SET_ITEM(t, i, PyLong_FromUnsignedLongLong(self->s.cls_count[i]));
    PyTuple_SET_ITEM(t, CLS_COUNT, PyLong_FromUnsignedLongLong(self->s.n_taken));
    PyTuple_SET_ITEM(t, CLS_COUNT + 1, PyLong_FromUnsignedLongLong(self->s.n_stalls));
    return t;
}

static PyObject *Core_reset_counters(CoreObject *self, PyObject *Py_UNUSED(ignored)) {
    if (busy(self)) return NULL;
    self->s.cycles = 0;
    self->s.instret = 0;
    memset(self->s.cls_count, 0, sizeof self->s.cls_count);
    self->s.n_taken = 0;
    self->s.n_stalls = 0;
    self->s.ld_rd = 0;
    self->s.ld2_rd = 0;
    self->s.redirected = 0;
    self->s.last_rd = RV_SINK;
    Py_RETURN_NONE;
}

static PyObject *Core_flush_decode_cache(CoreObject *self, PyObject *Py_UNUSED(ignored)) {
    if (busy(self)) return NULL;
    rv_blocks_flush(&self->s);
    Py_RETURN_NONE;
}

static PyObject *Core_get_u64(CoreObject *self, void *closure) {
    return PyLong_FromUnsignedLongLong(*(uint64_t *)((char *)&self->s + (size_t)closure));
}

static int Core_set_u64(CoreObject *self, PyObject *v, void *closure) {
    if (!v) {
        PyErr_SetString(PyExc_AttributeError, "cannot delete");
        return -1;
    }
    unsigned long long u = PyLong_AsUnsignedLongLongMask(v);
    if (u == (unsigned long long)-1 && PyErr_Occurred()) return -1;
    if (busy(self)) return -1;
    size_t off = (size_t)closure;
    if (off == offsetof(rv_state, pc) && self->s.xlen == 32) u &= 0xffffffffull;
    *(uint64_t *)((char *)&self->s + off) = u;
    if (off == offsetof(rv_state, pc)) { self->s.ld_rd = 0; self->s.ld2_rd = 0; self->s.redirected = 0; self->s.last_rd = RV_SINK; }
    return 0;
}

static PyObject *Core_get_int(CoreObject *self, void *closure) {
    return PyLong_FromLong(*(int *)((char *)&self->s + (size_t)closure));
}

static PyObject *Core_get_running(CoreObject *self, void *Py_UNUSED(closure)) { return PyBool_FromLong(self->running); }

static PyMethodDef Core_methods[] = {
    {"read_mem", (PyCFunction)Core_read_mem, METH_VARARGS, "read_mem(addr, n) -> bytes"},
    {"write_mem", (PyCFunction)Core_write_mem, METH_VARARGS, "write_mem(addr, buffer): copy bytes into RAM"},
    {"memory", (PyCFunction)Core_memory, METH_NOARGS, "read-only memoryview of the whole RAM"},
    {"get_reg", (PyCFunction)Core_get_reg, METH_O, "get_reg(i) -> unsigned value"},
    {"set_reg", (PyCFunction)Core_set_reg, METH_VARARGS, "set_reg(i, value) (masked to XLEN; x0 ignored)"},
    {"get_regs", (PyCFunction)Core_get_regs, METH_NOARGS, "tuple of x0..x31"},
    {"set_costs", (PyCFunction)Core_set_costs, METH_VARARGS, "set_costs(costs in COST_KEYS order, clock_hz, timebase_hz)"},
    {"run", (PyCFunction)Core_run, METH_O, "run(max_instret) -> halt code; stops when instret reaches max_instret"},
    {"fault", (PyCFunction)Core_fault, METH_NOARGS, "(kind, pc, addr, insn) of the last fault"},
    {"stats", (PyCFunction)Core_stats, METH_NOARGS, "per-class retired counts (CLASS_NAMES order), taken branches, load-use stalls"},
    {"reset_counters", (PyCFunction)Core_reset_counters, METH_NOARGS, "zero cycles, instret and statistics"},
    {"flush_decode_cache", (PyCFunction)Core_flush_decode_cache, METH_NOARGS, "drop all decoded instructions"},
    {"set_stack_guard", (PyCFunction)Core_set_stack_guard, METH_O,
     "set_stack_guard(lo): memory access with sp < lo faults (0: no guard); resets sp_min"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Core_getset[] = {
    {"pc", (getter)Core_get_u64, (setter)Core_set_u64, "program counter", (void *)offsetof(rv_state, pc)},
    {"cycles", (getter)Core_get_u64, (setter)Core_set_u64, "modelled cycles", (void *)offsetof(rv_state, cycles)},
    {"instret", (getter)Core_get_u64, (setter)Core_set_u64, "retired instructions", (void *)offsetof(rv_state, instret)},
    {"sp_min", (getter)Core_get_u64, (setter)Core_set_u64, "lowest sp seen at a memory access (all ones: none)",
     (void *)offsetof(rv_state, sp_min)},
    {"stack_lo", (getter)Core_get_u64, NULL, "stack guard (set_stack_guard)", (void *)offsetof(rv_state, stack_lo)},
    {"halt_pc", (getter)Core_get_u64, NULL, "address of the ecall/ebreak that ended the last run",
     (void *)offsetof(rv_state, halt_pc)},
    {"running", (getter)Core_get_running, NULL, "run() in progress", NULL},
    {"mem_base", (getter)Core_get_u64, NULL, "RAM base", (void *)offsetof(rv_state, base)},
    {"mem_size", (getter)Core_get_u64, NULL, "RAM size", (void *)offsetof(rv_state, size)},
    {"xlen", (getter)Core_get_int, NULL, "32 or 64", (void *)offsetof(rv_state, xlen)},
    {"zbb", (getter)Core_get_int, NULL, "Zbb enabled", (void *)offsetof(rv_state, zbb)},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "rlcc.emulator._rvcore.Core",
    .tp_basicsize = sizeof(CoreObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Core(xlen=64, mem_base=0x10000, mem_size=4 MiB, zbb=False): one RISC-V hart with flat RAM",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Core_init,
    .tp_dealloc = (destructor)Core_dealloc,
    .tp_methods = Core_methods,
    .tp_getset = Core_getset,
    .tp_as_buffer = &Core_as_buffer,
};

/* Python spelling of the decoded form of one instruction word, for tests and tools (instruction
 * histograms, disassembly): decode(raw, xlen=64, zbb=False) -> (op, rd, rs1, rs2, imm, len). */
static PyObject *rvcore_decode(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"raw", "xlen", "zbb", NULL};
    unsigned long raw;
    int xlen = 64, zbb = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "k|ip", kwlist, &raw, &xlen, &zbb)) return NULL;
    if (xlen != 32 && xlen != 64) {
        PyErr_SetString(PyExc_ValueError, "xlen must be 32 or 64");
        return NULL;
    }
    if (raw > 0xffffffffUL || ((raw & 3) != 3 && raw > 0xffff)) {
        PyErr_SetString(PyExc_ValueError, "raw must be a 32-bit word, or a 16-bit one for a compressed form");
        return NULL;
    }
    rv_dinsn d;
    memset(&d, 0, sizeof d);
    rv_decode((uint32_t)raw, xlen, zbb, &d);
    return Py_BuildValue("(iiiiii)", d.op, d.rd == RV_SINK ? 0 : d.rd, d.rs1, d.rs2, d.imm, d.len);
}

static PyMethodDef rvcore_functions[] = {
    {"decode", (PyCFunction)(void (*)(void))rvcore_decode, METH_VARARGS | METH_KEYWORDS,
     "decode(raw, xlen=64, zbb=False) -> (op, rd, rs1, rs2, imm, len): op indexes OP_NAMES; "
     "registers a format does not use are 0 (FORMAT_FIELDS); raw < 0x10000 with low bits != 11 is a "
     "compressed form"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef rvcore_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_rvcore",
    .m_doc = "RISC-V RV32IMC/RV64IMAC(+Zbb) interpreter core of rlcc.",
    .m_size = -1,
    .m_methods = rvcore_functions,
};

static int add_names(PyObject *m, const char *name, const char *const *names, int n) {
    PyObject *t = PyTuple_New(n);
    if (!t) return -1;
    for (int i = 0; i < n; i++) {
        PyObject *v = PyUnicode_FromString(names[i]);
        if (!v) { Py_DECREF(t); return -1; }
        PyTuple_SET_ITEM(t, i, v);
    }
    if (PyModule_AddObject(m, name, t) < 0) { Py_DECREF(t); return -1; }
    return 0;
}

/* FORMAT_FIELDS: {format name: the register fields it uses, a sub-tuple of ("rd", "rs1", "rs2")}. */
static int add_format_fields(PyObject *m) {
    static const struct { const char *name; int rd, rs1, rs2; } fmts[FMT_COUNT] = {
#define FMT_ROW(f, name, rs1, rs2, rd) {name, rd, rs1, rs2},
        RV_FORMATS(FMT_ROW)
#undef FMT_ROW
    };
    PyObject *dict = PyDict_New();
    if (!dict) return -1;
    for (int i = 0; i < FMT_COUNT; i++) {
        const char *f[3];
        int n = 0;
        if (fmts[i].rd) f[n++] = "rd";
        if (fmts[i].rs1) f[n++] = "rs1";
        if (fmts[i].rs2) f[n++] = "rs2";
        PyObject *t = PyTuple_New(n);
        for (int j = 0; t && j < n; j++) PyTuple_SET_ITEM(t, j, PyUnicode_FromString(f[j]));
        if (!t || PyDict_SetItemString(dict, fmts[i].name, t) < 0) {
            Py_XDECREF(t);
            Py_DECREF(dict);
            return -1;
        }
        Py_DECREF(t);
    }
    if (PyModule_AddObject(m, "FORMAT_FIELDS", dict) < 0) { Py_DECREF(dict); return -1; }
    return 0;
}

#define NAME_OF(k, name, ...) name,
#define CLS_NAME_OF_OP(o, name, cls, fmt) cls_names[CLS_##cls],
#define FMT_NAME_OF_OP(o, name, cls, fmt) fmt_names[FMT_##fmt],
PyMODINIT_FUNC PyInit__rvcore(void) {
    static const char *const cost_keys[COST_COUNT] = {RV_COSTS(NAME_OF)};
    static const char *const cls_names[CLS_COUNT] = {RV_CLASSES(NAME_OF)};
    static const char *const fault_names[FAULT_COUNT] = {RV_FAULTS(NAME_OF)};
    static const char *const halt_names[HALT_COUNT] = {RV_HALTS(NAME_OF)};
    static const char *const fmt_names[FMT_COUNT] = {RV_FORMATS(NAME_OF)};
    static const char *const op_names[OP_COUNT] = {RV_OPS(NAME_OF)};
    const char *op_cls_names[OP_COUNT] = {RV_OPS(CLS_NAME_OF_OP)};
    const char *op_fmt_names[OP_COUNT] = {RV_OPS(FMT_NAME_OF_OP)};
    if (PyType_Ready(&CoreType) < 0) return NULL;
    PyObject *m = PyModule_Create(&rvcore_module);
    if (!m) return NULL;
    Py_INCREF(&CoreType);
    if (PyModule_AddObject(m, "Core", (PyObject *)&CoreType) < 0 ||
        add_names(m, "COST_KEYS", cost_keys, COST_COUNT) < 0 ||
        add_names(m, "CLASS_NAMES", cls_names, CLS_COUNT) < 0 ||
        add_names(m, "FAULT_NAMES", fault_names, FAULT_COUNT) < 0 ||
        add_names(m, "HALT_NAMES", halt_names, HALT_COUNT) < 0 ||
        add_names(m, "OP_NAMES", op_names, OP_COUNT) < 0 ||
        add_names(m, "OP_CLASSES", op_cls_names, OP_COUNT) < 0 ||
        add_names(m, "OP_FORMATS", op_fmt_names, OP_COUNT) < 0 ||
        add_format_fields(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
#undef NAME_OF
#undef CLS_NAME_OF_OP
#undef FMT_NAME_OF_OP
