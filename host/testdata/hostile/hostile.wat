;; The hostile module of host's hostile_test.go: a native-transport guest
;; whose tools misbehave, each in one way, and one tool that behaves. A tool
;; is picked by the first letter of its name in the input (after
;; "tool":"), so every tool name starts with a letter of its own.
;;   echo               answers {"ok":true}
;;   loop               loops forever
;;   memory_bomb        grows memory until refused, then traps
;;   recurse            recurses without end (stack overflow)
;;   trap               executes unreachable
;;   oversized_output   returns the first 64 KiB of memory as its output
;;   not_json           returns "not json"
;;   wrong_types        returns a message whose "error" is a number
;;   bad_pointer        calls log with a pointer outside memory
;;   flood              calls log forever
;;   user_state_write   state_set "user:hostile"
;;   app_state_write    state_set "app:hostile"
;;   http_fetch         GETs the URL of config value "url"
;;   grow_table         grows its table by 64M elements; traps if refused
;;   spam_log           logs a 64 KiB line 10,000 times, then answers ok
;;   info_reentrant     its adkhost_alloc calls invocation_info, which
;;                      allocates, which calls invocation_info...
;;   xfill_state        writes a 32 KiB state value 1,000 times (32 MB)
;; A tool that gets a status from a host function reports it as its error:
;; {"error":"<function> answered status <N>"}.
(module
  (import "adkhost" "log" (func $log (param i32 i32 i32) (result i32)))
  (import "adkhost" "state_set" (func $state_set (param i32 i32 i32 i32) (result i32)))
  (import "adkhost" "config_get" (func $config_get (param i32 i32 i32 i32) (result i32)))
  (import "adkhost" "http_request" (func $http_request (param i32 i32 i32 i32) (result i32)))
  (import "adkhost" "invocation_info" (func $info (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (table $t 1 funcref)
  (global $heap (mut i32) (i32.const 4096))
  (global $evil (mut i32) (i32.const 0))

  ;; NUL-terminated strings; memory is zeroed, so each ends before the next.
  (data (i32.const 16) "{\"abiVersion\":1,\"name\":\"hostile\",\"tools\":[{\"name\":\"echo\",\"description\":\"Behaves.\"},{\"name\":\"loop\",\"description\":\"Loops forever.\"},{\"name\":\"memory_bomb\",\"description\":\"Grows memory until refused.\"},{\"name\":\"recurse\",\"description\":\"Overflows the stack.\"},{\"name\":\"trap\",\"description\":\"Traps.\"},{\"name\":\"oversized_output\",\"description\":\"Returns 64 KiB.\"},{\"name\":\"not_json\",\"description\":\"Returns text.\"},{\"name\":\"wrong_types\",\"description\":\"Returns a number as its error.\"},{\"name\":\"bad_pointer\",\"description\":\"Passes a bad pointer.\"},{\"name\":\"flood\",\"description\":\"Calls log forever.\"},{\"name\":\"user_state_write\",\"description\":\"Writes user state.\"},{\"name\":\"app_state_write\",\"description\":\"Writes app state.\"},{\"name\":\"http_fetch\",\"description\":\"Fetches the configured URL.\"},{\"name\":\"grow_table\",\"description\":\"Grows its table.\"},{\"name\":\"spam_log\",\"description\":\"Floods the log.\"},{\"name\":\"info_reentrant\",\"description\":\"Re-enters from its allocator.\"},{\"name\":\"xfill_state\",\"description\":\"Writes 32 MB of state.\"}],\"hooks\":[\"tool_call\"],\"capabilities\":[\"state\",\"config\",\"http\"]}")
  (data (i32.const 2000) "\"tool\":\"")
  (data (i32.const 2016) "{\"abiVersion\":1,\"result\":{\"ok\":true}}")
  (data (i32.const 2100) "not json")
  (data (i32.const 2120) "{\"abiVersion\":1,\"result\":{\"ok\":true},\"error\":42}")
  (data (i32.const 2200) "{\"abiVersion\":1,\"error\":\"")
  (data (i32.const 2240) " answered status ")
  (data (i32.const 2260) "\"}")
  (data (i32.const 2270) "log")
  (data (i32.const 2280) "state_set user:hostile")
  (data (i32.const 2310) "state_set app:hostile")
  (data (i32.const 2340) "http_request")
  (data (i32.const 2360) "user:hostile")
  (data (i32.const 2380) "app:hostile")
  (data (i32.const 2400) "true")
  (data (i32.const 2410) "url")
  (data (i32.const 2420) "{\"url\":\"")
  (data (i32.const 2440) "config_get url")
  (data (i32.const 2460) "fill")
  (data (i32.const 2470) "state_set fill")
  ;; 2500, 2504: the result slots of config_get and http_request.

  (func (export "adkhost_abi_version_1"))

  ;; A bump allocator that never frees: the tests make few calls.
  (func $alloc (export "adkhost_alloc") (param $n i32) (result i32)
    (local $p i32) (local $end i32)
    (if (global.get $evil)
      (then (drop (call $info (i32.const 2500) (i32.const 2504)))))
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

  (func (export "adkhost_free") (param i32 i32))

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

  ;; $append copies the string at $src to $dst and returns its end.
  (func $append (param $dst i32) (param $src i32) (result i32)
    (local $n i32)
    (local.set $n (call $strlen (local.get $src)))
    (memory.copy (local.get $dst) (local.get $src) (local.get $n))
    (i32.add (local.get $dst) (local.get $n)))

  (func $static (param $p i32) (result i64)
    (call $pack (local.get $p) (call $strlen (local.get $p))))

  ;; $fail answers {"error":"<what> answered status <s>"}.
  (func $fail (param $what i32) (param $s i32) (result i64)
    (local $o i32) (local $q i32)
    (local.set $o (call $alloc (i32.const 128)))
    (local.set $q (call $append (local.get $o) (i32.const 2200)))
    (local.set $q (call $append (local.get $q) (local.get $what)))
    (local.set $q (call $append (local.get $q) (i32.const 2240)))
    (i32.store8 (local.get $q) (i32.add (i32.const 48) (local.get $s)))
    (local.set $q (call $append (i32.add (local.get $q) (i32.const 1)) (i32.const 2260)))
    (call $pack (local.get $o) (i32.sub (local.get $q) (local.get $o))))

  ;; $recurse never returns; using its result keeps each frame alive.
  (func $recurse (param $d i32) (result i32)
    (i32.add (call $recurse (i32.add (local.get $d) (i32.const 1))) (i32.const 1)))

  ;; $toolLetter returns the first letter of the tool's name, or 0.
  (func $toolLetter (param $p i32) (param $n i32) (result i32)
    (local $i i32) (local $j i32)
    (block $notFound
      (loop $at
        (br_if $notFound (i32.gt_u (i32.add (local.get $i) (i32.const 9)) (local.get $n)))
        (local.set $j (i32.const 0))
        (block $mismatch
          (loop $cmp
            (br_if $mismatch (i32.ne
              (i32.load8_u (i32.add (local.get $p) (i32.add (local.get $i) (local.get $j))))
              (i32.load8_u (i32.add (i32.const 2000) (local.get $j)))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br_if $cmp (i32.lt_u (local.get $j) (i32.const 8))))
          (return (i32.load8_u (i32.add (local.get $p) (i32.add (local.get $i) (i32.const 8))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $at)))
    (i32.const 0))

  (func $httpFetch (result i64)
    (local $s i32) (local $req i32) (local $q i32) (local $vl i32)
    (local.set $s (call $config_get (i32.const 2410) (i32.const 3) (i32.const 2500) (i32.const 2504)))
    (if (local.get $s) (then (return (call $fail (i32.const 2440) (local.get $s)))))
    (local.set $vl (i32.load (i32.const 2504)))
    (local.set $req (call $alloc (i32.add (local.get $vl) (i32.const 16))))
    (local.set $q (call $append (local.get $req) (i32.const 2420)))
    (memory.copy (local.get $q) (i32.load (i32.const 2500)) (local.get $vl))
    (local.set $q (call $append (i32.add (local.get $q) (local.get $vl)) (i32.const 2260)))
    (local.set $s (call $http_request
      (local.get $req) (i32.sub (local.get $q) (local.get $req)) (i32.const 2500) (i32.const 2504)))
    (if (i32.eqz (local.get $s)) (then (return (call $static (i32.const 2016)))))
    (call $fail (i32.const 2340) (local.get $s)))

  (func (export "adkhost_describe") (param i32 i32) (result i64)
    (call $static (i32.const 16)))

  (func (export "adkhost_tool_call") (param $p i32) (param $n i32) (result i64)
    (local $c i32) (local $s i32)
    (local.set $c (call $toolLetter (local.get $p) (local.get $n)))
    (if (i32.eq (local.get $c) (i32.const 0x6c)) ;; loop
      (then (loop $forever (br $forever))))
    (if (i32.eq (local.get $c) (i32.const 0x6d)) ;; memory_bomb
      (then
        (loop $grow
          (br_if $grow (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))
        unreachable))
    (if (i32.eq (local.get $c) (i32.const 0x72)) ;; recurse
      (then (return (i64.extend_i32_u (call $recurse (i32.const 0))))))
    (if (i32.eq (local.get $c) (i32.const 0x74)) ;; trap
      (then unreachable))
    (if (i32.eq (local.get $c) (i32.const 0x6f)) ;; oversized_output
      (then (return (call $pack (i32.const 0) (i32.const 65536)))))
    (if (i32.eq (local.get $c) (i32.const 0x6e)) ;; not_json
      (then (return (call $static (i32.const 2100)))))
    (if (i32.eq (local.get $c) (i32.const 0x77)) ;; wrong_types
      (then (return (call $static (i32.const 2120)))))
    (if (i32.eq (local.get $c) (i32.const 0x62)) ;; bad_pointer
      (then (return (call $fail (i32.const 2270)
        (call $log (i32.const 0) (i32.const 0xfffffff0) (i32.const 16))))))
    (if (i32.eq (local.get $c) (i32.const 0x66)) ;; flood
      (then (loop $flood
        (drop (call $log (i32.const 0) (i32.const 2270) (i32.const 3)))
        (br $flood))))
    (if (i32.eq (local.get $c) (i32.const 0x75)) ;; user_state_write
      (then (return (call $fail (i32.const 2280)
        (call $state_set (i32.const 2360) (i32.const 12) (i32.const 2400) (i32.const 4))))))
    (if (i32.eq (local.get $c) (i32.const 0x61)) ;; app_state_write
      (then (return (call $fail (i32.const 2310)
        (call $state_set (i32.const 2380) (i32.const 11) (i32.const 2400) (i32.const 4))))))
    (if (i32.eq (local.get $c) (i32.const 0x68)) ;; http_fetch
      (then (return (call $httpFetch))))
    (if (i32.eq (local.get $c) (i32.const 0x67)) ;; grow_table
      (then
        (if (i32.ne (table.grow $t (ref.null func) (i32.const 0x4000000)) (i32.const -1))
          (then (return (call $static (i32.const 2016)))))
        unreachable))
    (if (i32.eq (local.get $c) (i32.const 0x73)) ;; spam_log
      (then
        (local.set $c (i32.const 10000))
        (loop $spam
          (drop (call $log (i32.const 0) (i32.const 0) (i32.const 65536)))
          (local.set $c (i32.sub (local.get $c) (i32.const 1)))
          (br_if $spam (local.get $c)))
        (return (call $static (i32.const 2016)))))
    (if (i32.eq (local.get $c) (i32.const 0x78)) ;; xfill_state
      (then
        (memory.fill (i32.const 20000) (i32.const 0x61) (i32.const 32768))
        (i32.store8 (i32.const 20000) (i32.const 0x22))
        (i32.store8 (i32.const 52767) (i32.const 0x22))
        (local.set $c (i32.const 1000))
        (loop $fill
          (local.set $s (call $state_set (i32.const 2460) (i32.const 4) (i32.const 20000) (i32.const 32768)))
          (if (local.get $s) (then (return (call $fail (i32.const 2470) (local.get $s)))))
          (local.set $c (i32.sub (local.get $c) (i32.const 1)))
          (br_if $fill (local.get $c)))
        (return (call $static (i32.const 2016)))))
    (if (i32.eq (local.get $c) (i32.const 0x69)) ;; info_reentrant
      (then
        (global.set $evil (i32.const 1))
        (drop (call $info (i32.const 2500) (i32.const 2504)))
        (global.set $evil (i32.const 0))
        (return (call $static (i32.const 2016)))))
    (call $static (i32.const 2016)))
)
