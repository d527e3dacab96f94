package graph

import (
	"context"
	"math/rand/v2"
	"testing"
)

// checkSetOps applies ops (3 bytes each: operation, src, dst) to an edgeSet
// and to a Go map and compares them after every step.
func checkSetOps(t *testing.T, ops []byte) {
	const capacity = 64
	s := newEdgeSet(capacity)
	ref := map[uint64]bool{}
	for ; len(ops) >= 3; ops = ops[3:] {
		// Few distinct ends, so keys collide on home slots and wrap around.
		k := key(int32(ops[1]%16), int32(ops[2]%16)<<20)
		switch ops[0] % 3 {
		case 0:
			if len(ref) == capacity {
				continue
			}
			if got, want := s.add(k), !ref[k]; got != want {
				t.Fatalf("add(%x) = %v, want %v", k, got, want)
			}
			ref[k] = true
		case 1:
			if got, want := s.del(k), ref[k]; got != want {
				t.Fatalf("del(%x) = %v, want %v", k, got, want)
			}
			delete(ref, k)
		case 2:
			if got, want := s.has(k), ref[k]; got != want {
				t.Fatalf("has(%x) = %v, want %v", k, got, want)
			}
		}
		if s.len() != len(ref) {
			t.Fatalf("len %d, want %d", s.len(), len(ref))
		}
	}
	for k := range ref {
		if !s.has(k) {
			t.Fatalf("lost %x", k)
		}
	}
}

func TestEdgeSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for range 200 {
		ops := make([]byte, 3*500)
		for i := range ops {
			ops[i] = byte(rng.Uint32())
		}
		checkSetOps(t, ops)
	}
	if e := edgeOf(key(659_565, 7)); e != (Edge{659_565, 7}) {
		t.Errorf("edgeOf(key) = %v", e)
	}
}

func FuzzEdgeSet(f *testing.F) {
	f.Add([]byte{0, 1, 2, 0, 1, 3, 1, 1, 2, 2, 1, 3})
	f.Fuzz(func(t *testing.T, ops []byte) { checkSetOps(t, ops) })
}

// FuzzRewire builds a small graph from the input (first byte: items, then
// one byte per item for its subcategory, then pairs of bytes for edges) and
// checks the contract of Rewire on it.
func FuzzRewire(f *testing.F) {
	f.Add([]byte{6, 0, 0, 1, 1, 2, 2, 0, 2, 2, 4, 4, 0, 1, 3, 3, 5, 5, 1})
	f.Add([]byte{3, 0, 1, 0, 0, 1, 1, 0, 1, 2, 2, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		n := int(data[0]%32) + 2
		data = data[1:]
		sub := make([]int32, n)
		for i := 0; i < n && len(data) > 0; i, data = i+1, data[1:] {
			sub[i] = int32(data[0] % 4)
		}
		var pos []Edge
		seen := map[Edge]bool{}
		for ; len(data) >= 2; data = data[2:] {
			e := Edge{int32(int(data[0]) % n), int32(int(data[1]) % n)}
			if e.Src != e.Dst && sub[e.Src] != sub[e.Dst] && !seen[e] {
				seen[e] = true
				pos = append(pos, e)
			}
		}
		neg, st, err := Rewire(context.Background(), pos, sub, rand.New(rand.NewPCG(1, 1)), RewireOptions{ExtraAttempts: 2000, MaxDropFraction: -1})
		if err != nil {
			t.Fatal(err)
		}
		checkNegatives(t, pos, neg, st.DroppedEdges, sub, true)
		if u, _, err := Uniform(context.Background(), pos, sub, rand.New(rand.NewPCG(1, 1))); err == nil {
			checkNegatives(t, pos, u, nil, sub, false)
		}
	})
}
