package sizedlru

import "testing"

func TestBudgetAndOrder(t *testing.T) {
	c := New[int](100)
	c.Add("a", 1, 40)
	c.Add("b", 2, 40)
	if _, ok := c.Get("a"); !ok { // a is now the most recent
		t.Fatal("a missing")
	}
	c.Add("c", 3, 40) // over budget: b, the least recently used, goes
	if _, ok := c.Peek("b"); ok || c.Len() != 2 || c.Used() != 80 {
		t.Fatalf("after c: b kept=%v len=%d used=%d", ok, c.Len(), c.Used())
	}
	if c.Add("big", 4, 101) {
		t.Fatal("an entry over the whole budget was kept")
	}
	if !c.Grow("a", 20) || c.Used() != 100 {
		t.Fatalf("grow a: used=%d", c.Used())
	}
	if !c.Grow("c", 10) { // c to the front; a, now least recent, goes
		t.Fatal("grow c failed")
	}
	if _, ok := c.Peek("a"); ok || c.Used() != 50 {
		t.Fatalf("after growing c: a kept=%v used=%d", ok, c.Used())
	}
	if c.Grow("c", 60) {
		t.Fatal("c grew past the whole budget")
	}
	if c.Len() != 0 || c.Used() != 0 {
		t.Fatalf("after c outgrew the budget: len=%d used=%d", c.Len(), c.Used())
	}
	c.Add("x", 5, 10)
	c.Add("x", 6, 30) // replaced, charged anew
	if v, _ := c.Get("x"); v != 6 || c.Used() != 30 || c.Len() != 1 {
		t.Fatalf("replace: v=%d used=%d len=%d", v, c.Used(), c.Len())
	}
	c.Remove("x")
	if c.Len() != 0 || c.Used() != 0 {
		t.Fatal("remove left something")
	}
}
