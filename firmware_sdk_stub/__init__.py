"""rlcc.firmware_sdk_stub."""
