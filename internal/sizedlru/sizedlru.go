// Package sizedlru is a least-recently-used set of entries charged by
// size against a budget: adding or growing an entry drops the least
// recently used others until the total is within it. The stores' session
// caches keep their entries in one.
//
// A Cache is not safe for concurrent use: its users guard it with the
// mutex that also guards their entries.
package sizedlru

import "container/list"

// Cache holds entries of type V by key.
type Cache[V comparable] struct {
	max  int64
	used int64
	m    map[string]*list.Element // of *item[V]
	lru  list.List                // front: most recently used
}

type item[V comparable] struct {
	key  string
	v    V
	size int64
}

// New returns a cache of max bytes.
func New[V comparable](max int64) *Cache[V] {
	return &Cache[V]{max: max, m: map[string]*list.Element{}}
}

// Get returns key's entry and marks it used.
func (c *Cache[V]) Get(key string) (V, bool) {
	el := c.m[key]
	if el == nil {
		var zero V
		return zero, false
	}
	c.lru.MoveToFront(el)
	return el.Value.(*item[V]).v, true
}

// Peek returns key's entry without marking it used.
func (c *Cache[V]) Peek(key string) (V, bool) {
	el := c.m[key]
	if el == nil {
		var zero V
		return zero, false
	}
	return el.Value.(*item[V]).v, true
}

// Add makes v key's entry, charged size, in place of any other, and
// drops the least recently used others beyond the budget. An entry larger
// than the whole budget is not kept (false).
func (c *Cache[V]) Add(key string, v V, size int64) bool {
	c.Remove(key)
	if size > c.max {
		return false
	}
	c.m[key] = c.lru.PushFront(&item[V]{key: key, v: v, size: size})
	c.used += size
	c.evict()
	return true
}

// Grow charges key's entry delta more and marks it used, dropping the
// least recently used others beyond the budget; an entry that alone
// outgrows the budget is dropped (false), as is a missing one.
func (c *Cache[V]) Grow(key string, delta int64) bool {
	el := c.m[key]
	if el == nil {
		return false
	}
	it := el.Value.(*item[V])
	if it.size+delta > c.max {
		c.Remove(key)
		return false
	}
	it.size += delta
	c.used += delta
	c.lru.MoveToFront(el)
	c.evict()
	return true
}

// Remove drops key's entry, if any.
func (c *Cache[V]) Remove(key string) {
	if el := c.m[key]; el != nil {
		c.drop(el)
	}
}

// Len is the number of entries; Used the bytes they are charged.
func (c *Cache[V]) Len() int    { return len(c.m) }
func (c *Cache[V]) Used() int64 { return c.used }

func (c *Cache[V]) evict() {
	for c.used > c.max {
		c.drop(c.lru.Back())
	}
}

func (c *Cache[V]) drop(el *list.Element) {
	it := c.lru.Remove(el).(*item[V])
	delete(c.m, it.key)
	c.used -= it.size
}
