"""The command line the generators that read a git mirror share:
`GIT_DIR [REV] [MAPPINGS]`, with REV resolved to a full commit."""

import pathlib
import subprocess
import sys


def mirror_args():
    """(git_dir, commit, mappings directory) from sys.argv."""
    git_dir = sys.argv[1]
    rev = sys.argv[2] if len(sys.argv) > 2 else "HEAD"
    mappings = pathlib.Path(sys.argv[3] if len(sys.argv) > 3 else "mappings")
    commit = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", rev],
                            check=True, capture_output=True, text=True).stdout.strip()
    return git_dir, commit, mappings
