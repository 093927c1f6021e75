;; A native-transport guest for the memory host functions. Its tool_call
;; does what the first byte of its input says (Pool.Call, raw bytes):
;;   Q<query>  memory_search(query): the result JSON, or the status digit
;;   A         memory_add_session, return the status digit
;;   D         memory_add_session twice (for the host call limit)
;;   B         memory_search with a query outside memory: the status digit
;;   R         memory_search with result slots outside memory: the digit
;; The tests drop its "capabilities" to make a module that does not ask.
(module
  (import "adkhost" "memory_search" (func $search (param i32 i32 i32 i32) (result i32)))
  (import "adkhost" "memory_add_session" (func $add_session (result i32)))
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 4096))
  (data (i32.const 16) "{\"abiVersion\":1,\"name\":\"memory\",\"tools\":[{\"name\":\"memory\",\"description\":\"Searches and adds to memory.\"}],\"hooks\":[\"tool_call\"],\"capabilities\":[\"memory\"]}")

  (func (export "adkhost_abi_version_1"))

  ;; A bump allocator; free rewinds the heap to the freed block (see
  ;; misbehave.wat).
  (func $alloc (export "adkhost_alloc") (param $n i32) (result i32)
    (local $p i32) (local $end i32)
    (local.set $p (i32.and (i32.add (global.get $heap) (i32.const 7)) (i32.const -8)))
    (local.set $end (i32.add (local.get $p) (local.get $n)))
    (if (i32.gt_u (local.get $end) (i32.shl (memory.size) (i32.const 16)))
      (then
        (if (i32.eq
              (memory.grow (i32.sub
                (i32.shr_u (i32.add (local.get $end) (i32.const 65535)) (i32.const 16))
                (memory.size)))
              (i32.const -1))
          (then (return (i32.const 0))))))
    (global.set $heap (local.get $end))
    (local.get $p))

  (func (export "adkhost_free") (param $p i32) (param i32)
    (if (i32.and (i32.ge_u (local.get $p) (i32.const 4096))
                 (i32.lt_u (local.get $p) (global.get $heap)))
      (then (global.set $heap (local.get $p)))))

  (func $pack (param $p i32) (param $n i32) (result i64)
    (i64.or (i64.shl (i64.extend_i32_u (local.get $p)) (i64.const 32))
            (i64.extend_i32_u (local.get $n))))

  (func $strlen (param $p i32) (result i32)
    (local $q i32)
    (local.set $q (local.get $p))
    (block $done
      (loop $next
        (br_if $done (i32.eqz (i32.load8_u (local.get $q))))
        (local.set $q (i32.add (local.get $q) (i32.const 1)))
        (br $next)))
    (i32.sub (local.get $q) (local.get $p)))

  (func $status (param $s i32) (result i64)
    (local $o i32)
    (local.set $o (call $alloc (i32.const 1)))
    (i32.store8 (local.get $o) (i32.add (i32.const 48) (local.get $s)))
    (call $pack (local.get $o) (i32.const 1)))

  (func (export "adkhost_describe") (param i32 i32) (result i64)
    (call $pack (i32.const 16) (call $strlen (i32.const 16))))

  (func (export "adkhost_tool_call") (param $p i32) (param $n i32) (result i64)
    (local $c i32) (local $s i32)
    (if (i32.eqz (local.get $n)) (then (return (i64.const 0))))
    (local.set $c (i32.load8_u (local.get $p)))
    (if (i32.eq (local.get $c) (i32.const 0x51)) ;; Q
      (then
        (local.set $s (call $search
          (i32.add (local.get $p) (i32.const 1)) (i32.sub (local.get $n) (i32.const 1))
          (i32.const 1200) (i32.const 1204)))
        (if (i32.ne (local.get $s) (i32.const 0))
          (then (return (call $status (local.get $s)))))
        (return (call $pack (i32.load (i32.const 1200)) (i32.load (i32.const 1204))))))
    (if (i32.eq (local.get $c) (i32.const 0x41)) ;; A
      (then (return (call $status (call $add_session)))))
    (if (i32.eq (local.get $c) (i32.const 0x44)) ;; D
      (then
        (drop (call $add_session))
        (return (call $status (call $add_session)))))
    (if (i32.eq (local.get $c) (i32.const 0x42)) ;; B
      (then (return (call $status
        (call $search (i32.const 0xfffffff0) (i32.const 32) (i32.const 1200) (i32.const 1204))))))
    (if (i32.eq (local.get $c) (i32.const 0x52)) ;; R
      (then (return (call $status
        (call $search (i32.add (local.get $p) (i32.const 1)) (i32.const 0)
          (i32.const 0xfffffff0) (i32.const 1204))))))
    (i64.const 0))
)
