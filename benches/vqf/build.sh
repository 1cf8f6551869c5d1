#!/bin/sh
# Builds the Vector Quotient Filter (https://github.com/splatlab/vqf) into one
# static library for the `vqf` example, outside this repository: no VQF code
# is kept here. Usage:
#
#   git clone https://github.com/splatlab/vqf /tmp/vqf-src   # or any checkout
#   benches/vqf/build.sh /tmp/vqf-src /tmp/vqf-build
#   VQF_LIB_DIR=/tmp/vqf-build cargo run --release -p benchmarks --example vqf
#
# The library holds three builds of src/vqf_filter.c (8-bit remainders, the
# default TAG_BITS), each compiled with g++ (the file is C++ despite its name,
# as VQF's own Makefile compiles it) at -O3 -march=native: VQF's AVX-512 code
# where the CPU has it, its AVX2 code otherwise. VQF_MARCH=x86-64-v4 makes a
# library that runs on any CPU with AVX-512 (F, BW, CD, DQ, VL) and VBMI,
# which VQF's shuffles need, to carry to another machine:
#
#   vqf_*      the plain build (not thread-safe);
#   vqf_mt_*   the thread-safe build as published (-DENABLE_THREADS): inserts
#              lock their blocks, removes and lookups take no lock;
#   vqf_mtl_*  the thread-safe build with removes locked: the one edit below,
#              applied to a copy in OUT_DIR, makes vqf_remove take the lock of
#              the block(s) it may change, as vqf_insert does (one lock when
#              both candidate blocks are the same block), and release it after.
#
# The two thread-safe builds get their global symbols renamed (objcopy
# --redefine-syms, from nm's list of what each object defines), so that all
# three live in one process. The shuffle tables (shuffle_matrix_512*.c) are
# shared by the three.
set -eu

if [ $# -ne 2 ]; then
	echo "usage: $0 VQF_SOURCE_DIR OUT_DIR" >&2
	exit 2
fi
src=$(cd "$1" && pwd)
mkdir -p "$2/obj"
out=$(cd "$2" && pwd)
obj=$out/obj
CXX=${CXX:-g++}
march=${VQF_MARCH:-native}
if [ "$march" != native ]; then
	march="$march -mavx512vbmi"
fi
flags="-x c++ -std=gnu++11 -O3 -march=$march -fPIC -fno-exceptions -fno-rtti -w -I$src/include"

# The removes-locked variant: vqf_remove's last line, which looks in the
# primary block and then the alternate one without a lock, done under the
# blocks' locks.
call='return remove_tags(filter, tag, block_index) || remove_tags(filter, tag, alt_block_index);'
locked='uint64_t b1 = block_index \/ QUQU_BUCKETS_PER_BLOCK, b2 = alt_block_index \/ QUQU_BUCKETS_PER_BLOCK; if (b1 == b2) lock(filter->blocks[b1]); else lock_blocks(filter, block_index, alt_block_index); bool removed = remove_tags(filter, tag, block_index) || remove_tags(filter, tag, alt_block_index); if (b1 == b2) unlock(filter->blocks[b1]); else unlock_blocks(filter, block_index, alt_block_index); return removed;'
sed "s/^\( *\)$call\$/\1$locked/" "$src/src/vqf_filter.c" >"$out/vqf_filter_removes_locked.c"
if ! grep -q 'bool removed = remove_tags' "$out/vqf_filter_removes_locked.c"; then
	echo "$0: vqf_remove did not match the expected source; the edit was not applied" >&2
	exit 1
fi

set -x
$CXX $flags -c "$src/src/vqf_filter.c" -o "$obj/vqf_plain.o"
$CXX $flags -DENABLE_THREADS -c "$src/src/vqf_filter.c" -o "$obj/vqf_mt.o"
$CXX $flags -DENABLE_THREADS -c "$out/vqf_filter_removes_locked.c" -o "$obj/vqf_mtl.o"
set +x
# The shuffle tables serve only the AVX-512 code; on a CPU without AVX-512BW
# VQF compiles its AVX2 code, which needs none.
shuffles=
if $CXX -march=$march -dM -E - </dev/null | grep -q __AVX512BW__; then
	for m in shuffle_matrix_512 shuffle_matrix_512_16; do
		(set -x; $CXX $flags -c "$src/src/$m.c" -o "$obj/$m.o")
		shuffles="$shuffles $obj/$m.o"
	done
fi

# vqf_insert -> vqf_mt_insert; any other global (alt_index, print_block, ...,
# C++-mangled) gets the prefix as it is.
for p in mt mtl; do
	nm -g --defined-only "$obj/vqf_$p.o" |
		awk -v p="$p" '{ n = $3; print n, (n ~ /^vqf_/ ? "vqf_" p "_" substr(n, 5) : "vqf_" p "_" n) }' \
			>"$obj/vqf_$p.syms"
	objcopy --redefine-syms="$obj/vqf_$p.syms" "$obj/vqf_$p.o"
done

rm -f "$out/libvqf.a"
# shellcheck disable=SC2086 # $shuffles: zero or two paths without spaces
ar rcs "$out/libvqf.a" "$obj"/vqf_plain.o "$obj"/vqf_mt.o "$obj"/vqf_mtl.o $shuffles
echo "built $out/libvqf.a; run with VQF_LIB_DIR=$out"
