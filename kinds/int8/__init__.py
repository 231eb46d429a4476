"""The int8 kind: the network itself as int8 integer firmware (``rlcc.kinds.int8.kind``)."""
