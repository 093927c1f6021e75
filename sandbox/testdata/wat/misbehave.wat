;; A native-transport guest whose tool_call does what the first byte of its
;; input says. The sandbox tests call it with raw bytes (Pool.Call).
;;   (other) echo the input          L  loop forever
;;   T  trap (unreachable)           M  grow memory until refused, then trap
;;   H  claim a 2 GiB output         P  return an output outside memory
;;   G  return "not json"            K  log with a bad pointer, return the status digit
;;   S  state_get (not granted), return the status digit
;;   F  call log forever (a host call flood)
(module
  (import "adkhost" "log" (func $log (param i32 i32 i32) (result i32)))
  (import "adkhost" "state_get" (func $state_get (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 4096))
  (data (i32.const 16) "{\"abiVersion\":1,\"name\":\"misbehave\",\"tools\":[{\"name\":\"misbehave\",\"description\":\"Does what its input's first byte says.\"}],\"hooks\":[\"tool_call\"]}")
  (data (i32.const 1024) "not json")
  (data (i32.const 1100) "key")

  (func (export "adkhost_abi_version_1"))

  ;; A bump allocator. free rewinds the heap to the freed block: the host
  ;; frees the output, then the input, so each call leaves the heap as it
  ;; found it. (Only right for a guest that keeps no block across calls.)
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
    (local $c i32) (local $out i32)
    (if (i32.eqz (local.get $n)) (then (return (i64.const 0))))
    (local.set $c (i32.load8_u (local.get $p)))
    (if (i32.eq (local.get $c) (i32.const 0x4c)) ;; L
      (then (loop $forever (br $forever))))
    (if (i32.eq (local.get $c) (i32.const 0x54)) ;; T
      (then unreachable))
    (if (i32.eq (local.get $c) (i32.const 0x4d)) ;; M
      (then
        (loop $grow
          (br_if $grow (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))
        unreachable))
    (if (i32.eq (local.get $c) (i32.const 0x48)) ;; H
      (then (return (call $pack (i32.const 0) (i32.const 0x7fffffff)))))
    (if (i32.eq (local.get $c) (i32.const 0x50)) ;; P
      (then (return (call $pack (i32.const 0xfffffff0) (i32.const 16)))))
    (if (i32.eq (local.get $c) (i32.const 0x47)) ;; G
      (then (return (call $pack (i32.const 1024) (i32.const 8)))))
    (if (i32.eq (local.get $c) (i32.const 0x4b)) ;; K
      (then (return (call $status
        (call $log (i32.const 0) (i32.const 0xfffffff0) (i32.const 10))))))
    (if (i32.eq (local.get $c) (i32.const 0x46)) ;; F
      (then (loop $flood
        (drop (call $log (i32.const 0) (i32.const 1100) (i32.const 3)))
        (br $flood))))
    (if (i32.eq (local.get $c) (i32.const 0x53)) ;; S
      (then (return (call $status
        (call $state_get (i32.const 1100) (i32.const 3) (i32.const 1200) (i32.const 1204))))))
    (local.set $out (call $alloc (local.get $n)))
    (memory.copy (local.get $out) (local.get $p) (local.get $n))
    (call $pack (local.get $out) (local.get $n)))
)
