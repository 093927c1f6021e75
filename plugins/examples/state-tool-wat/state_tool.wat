;; state-tool-wat: a tool written by hand in WebAssembly text (ABI v1,
;; native transport; see abi/ABI.md §3 and §4). Build with wabt:
;;
;;   wat2wasm state_tool.wat -o state-tool-wat.wasm
;;
;; It provides one tool, mark_visited, which records "visited": true in the
;; session state with the state_set host function (so it asks for the
;; "state" capability) and answers {"visited": true}. It reads nothing of its
;; input: a tool that takes no arguments needs no JSON parser.
;;
;; Memory: messages are static data in the first page; adkhost_alloc is a
;; bump allocator above it that grows memory as needed, and adkhost_free
;; ignores every address. The host allocates its input block once and
;; again only when an input outgrows it, so the leak is bounded by the
;; largest input (x2). Outputs are static data, which ABI.md §3 allows
;; because adkhost_free ignores them.
(module
  (import "adkhost" "state_set"
    (func $state_set (param i32 i32 i32 i32) (result i32)))
  (import "adkhost" "log"
    (func $log (param i32 i32 i32) (result i32)))

  (memory (export "memory") 2)

  ;; Static messages. The offsets and lengths below must match.
  (data (i32.const 1024)
    "{\"abiVersion\":1,\"name\":\"state-tool-wat\",\"version\":\"1.0.0\",\"tools\":[{\"name\":\"mark_visited\",\"description\":\"Records in session state that the user visited.\",\"parameters\":{\"type\":\"object\",\"properties\":{}}}],\"hooks\":[\"tool_call\"],\"capabilities\":[\"state\"]}")
  ;; describe: 1024, 250 bytes
  (data (i32.const 2048) "visited")                                 ;; key: 2048, 7
  (data (i32.const 2064) "true")                                    ;; value: 2064, 4
  (data (i32.const 2080) "{\"abiVersion\":1,\"result\":{\"visited\":true}}") ;; ok: 2080, 42
  (data (i32.const 2176) "{\"abiVersion\":1,\"error\":\"state_set failed\"}") ;; failed: 2176, 43
  (data (i32.const 2240) "state-tool-wat: marked the session visited") ;; log: 2240, 42

  ;; The bump allocator's next free address: above the static data.
  (global $next (mut i32) (i32.const 65536))

  (func (export "adkhost_abi_version_1"))

  ;; adkhost_alloc returns size bytes (8-aligned), growing memory if
  ;; needed, or 0 when memory cannot grow.
  (func (export "adkhost_alloc") (param $size i32) (result i32)
    (local $p i32) (local $end i32) (local $need i32)
    (local.set $p (global.get $next))
    (local.set $end
      (i32.and (i32.add (i32.add (local.get $p) (local.get $size)) (i32.const 7))
               (i32.const -8)))
    (if (i32.lt_u (local.get $end) (local.get $p)) (then (return (i32.const 0))))
    (if (i32.gt_u (local.get $end) (i32.mul (memory.size) (i32.const 65536)))
      (then
        (local.set $need
          (i32.sub
            (i32.shr_u (i32.add (local.get $end) (i32.const 65535)) (i32.const 16))
            (memory.size)))
        (if (i32.eq (memory.grow (local.get $need)) (i32.const -1))
          (then (return (i32.const 0))))))
    (global.set $next (local.get $end))
    (local.get $p))

  (func (export "adkhost_free") (param i32 i32))

  ;; (ptr << 32) | len
  (func $pack (param $p i32) (param $n i32) (result i64)
    (i64.or (i64.shl (i64.extend_i32_u (local.get $p)) (i64.const 32))
            (i64.extend_i32_u (local.get $n))))

  (func (export "adkhost_describe") (param i32 i32) (result i64)
    (call $pack (i32.const 1024) (i32.const 250)))

  ;; The host calls tool_call only for mark_visited, its only tool.
  (func (export "adkhost_tool_call") (param i32 i32) (result i64)
    (if (call $state_set (i32.const 2048) (i32.const 7) (i32.const 2064) (i32.const 4))
      (then (return (call $pack (i32.const 2176) (i32.const 43)))))
    (drop (call $log (i32.const 0) (i32.const 2240) (i32.const 42)))
    (call $pack (i32.const 2080) (i32.const 42)))
)
