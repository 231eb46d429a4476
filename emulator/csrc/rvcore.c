#define PY_SSIZE_T_CLEAN
#include <Python.h>
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "_rvcore", "RISC-V interpreter core (being written).", -1, NULL};
PyMODINIT_FUNC PyInit__rvcore(void) { return PyModule_Create(&mod); }
