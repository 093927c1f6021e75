package appdef

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/adkhost/adkhost/engine"
)

// loadAgentFile parses the agent config in file, and its sub-agents'
// files, recursively. via is the config_path value that names file (its
// n is nil for the root). It returns nil when the file cannot be used; the
// errors are recorded.
func (l *loader) loadAgentFile(file string, via val) *agentSpec {
	if i := slices.Index(l.stack, file); i >= 0 {
		chain := append(slices.Clone(l.stack[i:]), file)
		l.add(via.errf("config_path cycle: %s", strings.Join(chain, " -> ")))
		return nil
	}
	if first, ok := l.used[file]; ok {
		// Each file is one agent, as in google-adk, where a second agent
		// from the same config would share its name with the first. It
		// also visits the references as a DAG: a file listed twice by
		// each of a chain of files no longer makes 2^depth agents.
		where := "the root agent"
		if first.n != nil {
			l0, _ := position(first.n)
			where = fmt.Sprintf("%s:%d", first.d.file, l0)
		}
		l.add(via.errf("%s is already the config of another agent (referenced at %s): an agent config makes one agent, and an agent has one parent; copy the file to make a second agent", file, where))
		return nil
	}
	l.used[file] = via
	if l.depth > engine.MaxAgentDepth {
		l.add(via.errf("agents nest more than %d levels deep here, counting sub_agents and AgentTool configs from the root agent's; flatten the tree", engine.MaxAgentDepth))
		return nil
	}
	if l.agents++; l.agents > maxAgents {
		if l.agents == maxAgents+1 {
			l.add(via.errf("more than %d agents in one definition", maxAgents))
		}
		return nil
	}
	data, ok := l.files[file]
	if !ok {
		if via.n == nil {
			l.add(&Error{File: file, Msg: "no such file in the definition (the root agent's config)"})
		} else {
			l.add(via.errf("no such file in the definition: %s", file))
		}
		return nil
	}
	d, perr := parseDoc(file, data)
	if perr != nil {
		l.add(perr)
		return nil
	}
	root := d.at(d.body, "")
	if root.isNull() {
		l.add(&Error{File: file, Line: 1, Column: 1, Msg: "empty agent config"})
		return nil
	}
	if _, ok := root.mapping(); !ok {
		l.add(root.errf("an agent config is a mapping, not %s", root.kind()))
		return nil
	}
	l.stack = append(l.stack, file)
	l.depth++
	defer func() { l.stack, l.depth = l.stack[:len(l.stack)-1], l.depth-1 }()
	return l.parseAgent(root, via.n == nil)
}

// parseAgent reads one agent's mapping. isRoot allows the adkhost block.
func (l *loader) parseAgent(v val, isRoot bool) *agentSpec {
	entries, _ := v.mapping()
	a := &agentSpec{at: v, class: classLlm}
	byKey := map[string]entry{}
	for _, e := range entries {
		byKey[e.key] = e
	}
	if e, ok := byKey["agent_class"]; ok && !e.val.isNull() {
		s, ok := e.val.str()
		class, known := agentClasses[s]
		switch {
		case !ok:
			l.add(e.val.errf("want a string, got %s", e.val.kind()))
			return nil
		case !known:
			l.add(e.val.errf("unknown agent_class %q; supported: LlmAgent (or Agent), SequentialAgent, ParallelAgent, LoopAgent%s",
				s, didYouMean(s, []string{classLlm, "Agent", classSequential, classParallel, classLoop})))
			return nil
		}
		a.class = class
	}
	fields := fieldsOf(a.class)
	for _, e := range entries {
		switch {
		case slices.Contains(fields, e.key):
			l.parseField(a, e)
		case e.key == extensionKey && isRoot:
			l.parseExtension(e.val)
		case e.key == extensionKey:
			l.add(e.keyAt.errf("the %s block belongs in the root agent's file, %s", extensionKey, l.root))
		case slices.Contains(llmFields, e.key) || slices.Contains(loopFields, e.key):
			l.add(e.keyAt.errf("unknown field %q: it is not a field of a %s", e.key, a.class))
		default:
			cands := fields
			if isRoot {
				cands = append(slices.Clone(fields), extensionKey)
			}
			l.add(e.keyAt.errf("unknown field %q%s", e.key, didYouMean(e.key, cands)))
		}
	}
	if _, ok := byKey["name"]; !ok {
		l.add(&Error{File: v.d.file, Line: firstLine(v), Column: firstCol(v), Field: "name", Msg: "missing required field name"})
	}
	if _, ok := byKey["instruction"]; !ok && a.class == classLlm {
		l.add(&Error{File: v.d.file, Line: firstLine(v), Column: firstCol(v), Field: "instruction",
			Msg: `missing required field instruction (google-adk's LlmAgent config requires it; "" for none)`})
	}
	return a
}

func firstLine(v val) int { l, _ := position(v.n); return l }
func firstCol(v val) int  { _, c := position(v.n); return c }

// parseField reads one field of the agent's class into a.
func (l *loader) parseField(a *agentSpec, e entry) {
	v := e.val
	if hook, ok := callbackHooks[e.key]; ok {
		a.callbacks = append(a.callbacks, l.parseCallbacks(v, hook)...)
		return
	}
	switch e.key {
	case "agent_class": // read first
	case "name":
		s, ok := l.str(v)
		if !ok {
			return
		}
		if !validAgentName(s) {
			l.add(v.errf("invalid agent name %q: google-adk wants an identifier (letters, digits, underscores; not starting with a digit) other than \"user\"", s))
			return
		}
		if len(s) > engine.MaxAgentNameBytes {
			// Every event of the agent carries its name.
			l.add(v.errf("agent name of %d bytes, over the limit of %d: name it in a few words", len(s), engine.MaxAgentNameBytes))
			return
		}
		a.name = s
		if prev, dup := l.names[s]; dup {
			l.add(v.errf("duplicate agent name %q, already used at %s", s, locate(prev)))
			return
		}
		l.names[s] = v
	case "description":
		a.description, _ = l.optStr(v)
	case "sub_agents":
		a.subAgents = l.parseSubAgents(v)
	case "model":
		if s, ok := l.optStr(v); ok && s != "" {
			if len(s) > maxModelNameBytes {
				l.add(v.errf("model name of %d bytes, over the limit of %d", len(s), maxModelNameBytes))
				return
			}
			a.model, a.modelAt = s, v
		}
	case "model_code":
		if !v.isNull() {
			l.add(v.errf("not supported: Python code references (model_code); name the model in model, e.g. gemini-2.5-flash, openai/gpt-4o-mini or scripted"))
		}
	case "instruction":
		a.instruction, _ = l.optStr(v)
	case "static_instruction":
		a.staticInstruction = l.parseStaticInstruction(v)
	case "disallow_transfer_to_parent":
		a.disallowParent, _ = l.optBool(v)
	case "disallow_transfer_to_peers":
		a.disallowPeers, _ = l.optBool(v)
	case "input_schema":
		if !v.isNull() {
			l.add(v.errf("not supported: Python code references (input_schema)"))
		}
	case "output_schema":
		a.outputSchema = l.parseOutputSchema(v)
		if a.outputSchema != nil {
			a.outputSchemaKeyOrder = v.keyOrder()
		}
	case "output_key":
		a.outputKey, _ = l.optStr(v)
	case "include_contents":
		s, ok := l.optStr(v)
		switch {
		case !ok || s == "":
		case s == string(engine.IncludeContentsDefault) || s == string(engine.IncludeContentsNone):
			a.includeContents = engine.IncludeContents(s)
		default:
			l.add(v.errf("include_contents is %q or %q, not %q", engine.IncludeContentsDefault, engine.IncludeContentsNone, s))
		}
	case "tools":
		a.tools = l.parseTools(v)
	case "generate_content_config":
		a.contentConfig = l.parseContentConfig(v)
	case "code_executor":
		a.codeExecutor = l.parseCodeExecutor(v)
	case "max_iterations":
		if v.isNull() {
			return
		}
		// google-adk takes any integer: 0 or less runs no round.
		n, ok := v.integer()
		if !ok || n != int64(int32(n)) {
			l.add(v.errf("want an integer (the most rounds; leave it out for no bound), got %s", v.kind()))
			return
		}
		a.maxIterations = new(int(n))
	}
}

// parseSubAgents reads sub_agents: a list of {config_path: ...}; {code: ...}
// is google-adk's Python reference, which adkhost cannot run.
func (l *loader) parseSubAgents(v val) []*agentSpec {
	if v.isNull() {
		return nil
	}
	items, ok := v.list()
	if !ok {
		l.add(v.errf("want a list of {config_path: <file>}, got %s", v.kind()))
		return nil
	}
	var out []*agentSpec
	for _, item := range items {
		entries, ok := item.mapping()
		if !ok {
			l.add(item.errf("want {config_path: <file>}, got %s", item.kind()))
			continue
		}
		var cp *entry
		for i, e := range entries {
			switch e.key {
			case "config_path":
				cp = &entries[i]
			case "code":
				l.add(e.val.errf("not supported: Python code references; define the sub-agent in a YAML file of the definition and name it with config_path"))
			default:
				l.add(e.keyAt.errf("unknown field %q%s", e.key, didYouMean(e.key, []string{"config_path", "code"})))
			}
		}
		if cp == nil {
			if len(entries) == 0 {
				l.add(item.errf("want {config_path: <file>}"))
			}
			continue
		}
		p, ok := l.str(cp.val)
		if !ok {
			continue
		}
		file, err := resolveConfigPath(cp.val.d.file, p)
		if err != "" {
			l.add(cp.val.errf("%s", err))
			continue
		}
		if sub := l.loadAgentFile(file, cp.val); sub != nil {
			out = append(out, sub)
		}
	}
	return out
}

// resolveConfigPath resolves p relative to the directory of from, within
// the definition's files; it returns a message when p is not acceptable.
func resolveConfigPath(from, p string) (string, string) {
	if p == "" {
		return "", "config_path is empty"
	}
	if path.IsAbs(p) || strings.HasPrefix(p, `\`) || (len(p) > 1 && p[1] == ':') {
		return "", "config_path " + p + " is absolute; it must be relative to the referencing file"
	}
	file := path.Join(path.Dir(from), p)
	if file == ".." || strings.HasPrefix(file, "../") {
		return "", "config_path " + p + " leads outside the definition's files"
	}
	return file, ""
}

// str reads a required string, recording a type error.
func (l *loader) str(v val) (string, bool) {
	s, ok := v.str()
	if !ok {
		l.add(v.errf("want a string, got %s", v.kind()))
	}
	return s, ok
}

// optStr reads an optional string: null is "".
func (l *loader) optStr(v val) (string, bool) {
	if v.isNull() {
		return "", true
	}
	return l.str(v)
}

// optBool reads an optional boolean: null is false.
func (l *loader) optBool(v val) (bool, bool) {
	if v.isNull() {
		return false, true
	}
	b, ok := v.boolean()
	if !ok {
		l.add(v.errf("want true or false, got %s", v.kind()))
	}
	return b, ok
}

// locate formats where v is, for messages naming another place.
func locate(v val) string {
	l, c := position(v.n)
	return v.d.file + ":" + itoa(l) + ":" + itoa(c)
}

// builtInCodeExecutorNames are the spellings of google-adk's
// BuiltInCodeExecutor.
var builtInCodeExecutorNames = map[string]bool{
	"BuiltInCodeExecutor": true, "google.adk.code_executors.BuiltInCodeExecutor": true,
	"google.adk.code_executors.built_in_code_executor.BuiltInCodeExecutor": true,
}

// parseCodeExecutor reads code_executor: google-adk's BuiltInCodeExecutor,
// named as a code reference is ({name: BuiltInCodeExecutor} or the name
// alone). google-adk's LlmAgent has the field, but its YAML loader (2.13)
// refuses it; adkhost takes it so such an agent can be written as a
// definition. Executors that run code on the host are refused.
func (l *loader) parseCodeExecutor(v val) bool {
	if v.isNull() {
		return false
	}
	name, ok := v.str()
	if !ok {
		entries, isMap := v.mapping()
		if !isMap {
			l.add(v.errf("want {name: BuiltInCodeExecutor}, got %s", v.kind()))
			return false
		}
		for _, e := range entries {
			switch e.key {
			case "name":
				name, _ = l.str(e.val)
			case "args":
				if !e.val.isNull() {
					l.add(e.val.errf("BuiltInCodeExecutor takes no args"))
					return false
				}
			default:
				l.add(e.keyAt.errf("unknown field %q%s", e.key, didYouMean(e.key, []string{"name", "args"})))
				return false
			}
		}
	}
	if !builtInCodeExecutorNames[name] {
		l.add(v.errf("code executor %q is not supported: adkhost runs no code on the host; the model's own code execution is {name: BuiltInCodeExecutor}", name))
		return false
	}
	return true
}
