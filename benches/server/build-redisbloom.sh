#!/usr/bin/env bash
# Builds RedisBloom (the Redis module the server is compared with) from a
# fetched copy, into a directory outside the repository: $EXT (default
# ../ext beside the repository). Prints the module's path.
#
#   bash benches/server/build-redisbloom.sh
#   EXT=/work/ext REDISBLOOM_GIT=/path/to/RedisBloom.git bash benches/server/build-redisbloom.sh
#
# The sources come from git: RedisBloom at $VERSION and, at the commits its
# submodules name, RedisModulesSDK (redismodule.h) and t-digest-c. Each
# *_GIT variable may name a local clone or mirror instead of GitHub. The
# module is compiled with one gcc command (the sources and flags of
# RedisBloom's Makefile, -O2 as its release build), so that neither its
# build scripts nor their system set-up are needed.
set -euo pipefail
cd "$(dirname "$0")/../.."
VERSION=${VERSION:-v2.6.28}
EXT=${EXT:-$(cd .. && pwd)/ext}
REDISBLOOM_GIT=${REDISBLOOM_GIT:-https://github.com/RedisBloom/RedisBloom.git}
SDK_GIT=${SDK_GIT:-https://github.com/RedisLabsModules/RedisModulesSDK.git}
TDIGEST_GIT=${TDIGEST_GIT:-https://github.com/RedisBloom/t-digest-c.git}
READIES_GIT=${READIES_GIT:-https://github.com/RedisLabsModules/readies.git}

case "$EXT" in
"$(pwd)"/*) echo "EXT=$EXT is inside the repository; pick a directory outside it" >&2; exit 2 ;;
esac
src=$EXT/RedisBloom-$VERSION
module=$EXT/redisbloom-$VERSION.so
if [ -f "$module" ]; then
    echo "$module"
    exit 0
fi
mkdir -p "$EXT"
rm -rf "$src"
git clone --quiet --no-checkout "$REDISBLOOM_GIT" "$src"
git -C "$src" checkout --quiet "$VERSION"
submodule() { # path url
    local rev
    rev=$(git -C "$src" ls-tree "$VERSION" "$1" | awk '{print $3}')
    rm -rf "${src:?}/$1"
    git clone --quiet --no-checkout "$2" "$src/$1"
    if ! git -C "$src/$1" checkout --quiet "$rev" 2>/dev/null; then
        # Only readies' debugger-trap header is used; any version has it.
        echo "note: $1 has no commit $rev; using its default branch" >&2
        git -C "$src/$1" checkout --quiet HEAD -- .
    fi
}
submodule deps/RedisModulesSDK "$SDK_GIT"
submodule deps/t-digest-c "$TDIGEST_GIT"
submodule deps/readies "$READIES_GIT"

cd "$src"
gcc -O2 -g -fPIC -shared -std=gnu99 \
    -D_GNU_SOURCE -DREDIS_MODULE_TARGET -DREDISMODULE_SDK_RLEC \
    -I. -Isrc -Ideps/RedisModulesSDK -Ideps -Ideps/murmur2 -Ideps/t-digest-c/src \
    deps/bloom/bloom.c deps/murmur2/MurmurHash2.c deps/rmutil/util.c \
    src/rebloom.c src/sb.c src/cf.c src/rm_topk.c src/rm_tdigest.c src/topk.c \
    src/rm_cms.c src/cms.c deps/t-digest-c/src/tdigest.c \
    -o "$module" -lm
echo "$module"
