package main

import "testing"

func TestFastPathGroups(t *testing.T) {
	for _, c := range []struct{ maxLocks, groups int }{
		{10, 1}, {16, 1}, {17, 2}, {64, 4}, {100, 8}, {256, 16}, {1024, 64}, {1 << 20, 1024},
	} {
		if got := fastPathGroups(c.maxLocks); got != c.groups {
			t.Errorf("max_locks_per_transaction %d: %d groups, want %d", c.maxLocks, got, c.groups)
		}
	}
}
