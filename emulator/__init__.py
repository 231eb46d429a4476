"""rlcc.emulator."""
