"""``python -m rlcc.train``: the same command as ``rlcc-train``."""

from rlcc.cli.train import train_command

if __name__ == "__main__":
    train_command(prog_name="rlcc-train")
