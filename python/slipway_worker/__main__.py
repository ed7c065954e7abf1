import asyncio
import sys

from .server import serve


def main() -> None:
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    asyncio.run(serve(root))


if __name__ == "__main__":
    main()
