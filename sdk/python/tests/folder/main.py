"""A folder module: main.py imports a sibling (helpers) and a dependency from
--path (site/vendpkg); TestFolderWithDependencies in context_test.go builds it."""

from adkhost import tool
from helpers import greet
import vendpkg

@tool
def hi(name: str) -> str:
    return vendpkg.shout(greet(name))
