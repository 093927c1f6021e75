#!/usr/bin/env python3
"""Conformance oracle: runs declarative scenarios through google-adk (Python).

Usage:
  python run_scenario.py SCENARIO.yaml [-o FILE]
  python run_scenario.py --dir SCENARIOS_DIR --out GOLDEN_DIR

See ../FORMAT.md for the scenario (YAML) and trace (JSON) formats. The trace is
what the Go runner must reproduce byte for byte.
"""

from __future__ import annotations

import os

# Pin the environment before google-adk is imported: the Gemini API variant
# (not Vertex AI) decides how function declarations are built, and
# ADK_ENABLE_*/ADK_DISABLE_* variables flip feature flags (e.g.
# JSON_SCHEMA_FOR_FUNC_DECL, PROGRESSIVE_SSE_STREAMING) that shape the trace.
# Goldens are generated with every feature at its 2.13.0 default.
for _var in list(os.environ):
  if (_var in ('GOOGLE_GENAI_USE_VERTEXAI', 'GOOGLE_CLOUD_PROJECT',
               'GOOGLE_CLOUD_LOCATION')
      or _var.startswith(('ADK_ENABLE_', 'ADK_DISABLE_'))):
    del os.environ[_var]

import argparse
import asyncio
import base64
import copy
import json
import logging
import re
import sys
import traceback
import typing
from typing import Any, Optional
import warnings

import pydantic
import yaml

from google.genai import types

from google.adk.agents import LlmAgent
from google.adk.agents import LoopAgent
from google.adk.agents import ParallelAgent
from google.adk.agents import SequentialAgent
from google.adk.agents.run_config import RunConfig
from google.adk.agents.run_config import StreamingMode
from google.adk.apps.app import App
from google.adk.models._capabilities import LlmCapabilities
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.planners import BuiltInPlanner
from google.adk.planners import PlanReActPlanner
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.sessions import InMemorySessionService
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.long_running_tool import LongRunningFunctionTool
from google.adk.tools.tool_context import ToolContext

APP_NAME = 'conformance'
DEFAULT_USER_ID = 'user'
DEFAULT_SESSION_ID = 's1'
DEFAULT_MODEL_NAME = 'scripted-model'

# Exception types a scenario may ask for (`error_type`). Default: ValueError.
ERROR_TYPES = {
    'ValueError': ValueError,
    'RuntimeError': RuntimeError,
    'KeyError': KeyError,
    'TypeError': TypeError,
    'Exception': Exception,
}


class ScenarioError(Exception):
  """The scenario file is malformed (a harness error, not an ADK outcome)."""


def _make_error(spec: dict[str, Any], key: str = 'raise') -> Exception:
  name = spec.get('error_type', 'ValueError')
  if name not in ERROR_TYPES:
    raise ScenarioError(f'unknown error_type {name!r}')
  return ERROR_TYPES[name](spec[key])


def _check_keys(where: str, d: Any, allowed: set[str]) -> None:
  if not isinstance(d, dict):
    raise ScenarioError(f'{where}: expected a mapping, got {type(d).__name__}')
  unknown = set(d) - allowed
  if unknown:
    raise ScenarioError(f'{where}: unknown keys {sorted(unknown)}')


# --------------------------------------------------------------------------
# Content / response construction from the scenario vocabulary.
# --------------------------------------------------------------------------

_PART_KEYS = {'text', 'thought', 'function_call', 'function_response',
              'executable_code', 'code_execution_result', 'inline_data'}


def build_part(spec: Any, where: str) -> types.Part:
  if isinstance(spec, str):
    return types.Part(text=spec)
  _check_keys(where, spec, _PART_KEYS)
  kwargs: dict[str, Any] = {}
  if 'text' in spec:
    kwargs['text'] = spec['text']
  if spec.get('thought'):
    kwargs['thought'] = True
  if 'function_call' in spec:
    fc = spec['function_call']
    _check_keys(where + '.function_call', fc, {'name', 'args', 'id'})
    kwargs['function_call'] = types.FunctionCall(
        name=fc['name'], args=fc.get('args', {}), id=fc.get('id'))
  if 'function_response' in spec:
    fr = spec['function_response']
    _check_keys(where + '.function_response', fr, {'name', 'response', 'id'})
    kwargs['function_response'] = types.FunctionResponse(
        name=fr['name'], response=fr.get('response', {}), id=fr.get('id'))
  if 'executable_code' in spec:
    ec = spec['executable_code']
    _check_keys(where + '.executable_code', ec, {'code', 'language'})
    kwargs['executable_code'] = types.ExecutableCode(
        code=ec.get('code'), language=ec.get('language', 'PYTHON'))
  if 'code_execution_result' in spec:
    cr = spec['code_execution_result']
    _check_keys(where + '.code_execution_result', cr, {'outcome', 'output'})
    kwargs['code_execution_result'] = types.CodeExecutionResult(
        outcome=cr.get('outcome', 'OUTCOME_OK'), output=cr.get('output'))
  if 'inline_data' in spec:
    d = spec['inline_data']
    _check_keys(where + '.inline_data', d,
                {'mime_type', 'data', 'display_name'})
    kwargs['inline_data'] = types.Blob(
        mime_type=d.get('mime_type'),
        data=base64.b64decode(d.get('data', ''), validate=True),
        display_name=d.get('display_name'))
  return types.Part(**kwargs)


_RESPONSE_KEYS = {
    'text', 'thought', 'function_calls', 'parts', 'role', 'error',
    'error_type', 'error_code', 'error_message', 'finish_reason',
    'turn_complete', 'partials', 'custom_metadata', 'no_content', 'agent',
    'usage_metadata',
}
_USAGE_METADATA_KEYS = {'prompt_token_count', 'candidates_token_count',
                        'total_token_count'}


def response_parts(spec: dict[str, Any], where: str) -> list[types.Part]:
  parts: list[types.Part] = []
  if 'thought' in spec:
    parts.append(types.Part(text=spec['thought'], thought=True))
  if 'text' in spec:
    parts.append(types.Part(text=spec['text']))
  for i, fc in enumerate(spec.get('function_calls', []) or []):
    _check_keys(f'{where}.function_calls[{i}]', fc, {'name', 'args', 'id'})
    parts.append(types.Part(function_call=types.FunctionCall(
        name=fc['name'], args=fc.get('args', {}), id=fc.get('id'))))
  for i, p in enumerate(spec.get('parts', []) or []):
    parts.append(build_part(p, f'{where}.parts[{i}]'))
  return parts


def build_llm_response(spec: Any, where: str) -> LlmResponse:
  """Builds an LlmResponse from a response spec (not `error`/`partials`)."""
  if isinstance(spec, str):
    spec = {'text': spec}
  _check_keys(where, spec, _RESPONSE_KEYS)
  kwargs: dict[str, Any] = {}
  parts = response_parts(spec, where)
  if parts and not spec.get('no_content'):
    kwargs['content'] = types.Content(role=spec.get('role', 'model'),
                                      parts=parts)
  for key in ('error_code', 'error_message', 'turn_complete',
              'custom_metadata'):
    if key in spec:
      kwargs[key] = spec[key]
  if 'finish_reason' in spec:
    kwargs['finish_reason'] = types.FinishReason(spec['finish_reason'])
  if 'usage_metadata' in spec:
    _check_keys(where + '.usage_metadata', spec['usage_metadata'],
                _USAGE_METADATA_KEYS)
    kwargs['usage_metadata'] = types.GenerateContentResponseUsageMetadata(
        **spec['usage_metadata'])
  return LlmResponse(**kwargs)


def build_content(spec: Any, where: str, default_role: str) -> types.Content:
  """A string, or {role, parts} / {role, text}."""
  if isinstance(spec, str):
    return types.Content(role=default_role, parts=[types.Part(text=spec)])
  _check_keys(where, spec, {'role', 'parts', 'text'})
  parts = []
  if 'text' in spec:
    parts.append(types.Part(text=spec['text']))
  for i, p in enumerate(spec.get('parts', []) or []):
    parts.append(build_part(p, f'{where}.parts[{i}]'))
  return types.Content(role=spec.get('role', default_role), parts=parts)


# --------------------------------------------------------------------------
# Serialization helpers (shared by events and requests).
# --------------------------------------------------------------------------


def dump_model(obj: Any) -> Any:
  if obj is None:
    return None
  if isinstance(obj, pydantic.BaseModel):
    return obj.model_dump(mode='json', exclude_none=True, by_alias=False)
  if isinstance(obj, type) and issubclass(obj, pydantic.BaseModel):
    return {'$pydantic_model': obj.__name__,
            'json_schema': obj.model_json_schema()}
  return to_jsonable(obj)


def to_jsonable(v: Any) -> Any:
  if isinstance(v, pydantic.BaseModel) or (
      isinstance(v, type) and issubclass(v, pydantic.BaseModel)):
    return dump_model(v)
  if isinstance(v, dict):
    return {str(k): to_jsonable(x) for k, x in v.items()}
  if isinstance(v, (list, tuple)):
    return [to_jsonable(x) for x in v]
  if isinstance(v, (set, frozenset)):
    return sorted(to_jsonable(x) for x in v)
  if isinstance(v, (str, int, float, bool)) or v is None:
    return v
  if isinstance(v, bytes):
    return {'$bytes': len(v)}
  return {'$repr': type(v).__name__}


def dump_content(content: Optional[types.Content]) -> Any:
  if content is None:
    return None
  d = dump_model(content)
  return d


def dump_system_instruction(si: Any) -> Optional[str]:
  """system_instruction as a single string (see FORMAT.md)."""
  if si is None:
    return None
  if isinstance(si, str):
    return si
  if isinstance(si, types.Part):
    return si.text or ''
  if isinstance(si, types.Content):
    return '\n'.join((p.text or '') for p in (si.parts or []))
  if isinstance(si, list):
    out = []
    for x in si:
      out.append(dump_system_instruction(x) or '')
    return '\n'.join(out)
  return json.dumps(to_jsonable(si), sort_keys=True)


def dump_tools(tools: Any) -> Any:
  if not tools:
    return None
  out = []
  for tool in tools:
    if isinstance(tool, types.Tool):
      d = dump_model(tool)
      decls = d.get('function_declarations')
      if decls:
        d['function_declarations'] = sorted(decls, key=lambda x: x['name'])
      out.append(d)
    else:
      out.append({'$repr': type(tool).__name__})
  return out


def dump_request(req: Any) -> dict[str, Any]:
  config = req.config
  cfg = config.model_dump(
      mode='json', exclude_none=True,
      exclude={'system_instruction', 'tools', 'response_schema',
               'response_json_schema'})
  for key in ('response_schema', 'response_json_schema'):
    value = getattr(config, key, None)
    if value is not None:
      cfg[key] = dump_model(value)
  out: dict[str, Any] = {
      'model': req.model,
      'contents': [dump_content(c) for c in req.contents],
  }
  si = dump_system_instruction(config.system_instruction)
  if si is not None:
    out['system_instruction'] = si
  tools = dump_tools(config.tools)
  if tools:
    out['tools'] = tools
  if cfg:
    out['config'] = cfg
  return out


def _prune_empty(d: dict[str, Any]) -> dict[str, Any]:
  return {k: v for k, v in d.items() if v not in (None, {}, [], '')}


def dump_event(event: Any) -> dict[str, Any]:
  d = event.model_dump(mode='json', exclude_none=True, by_alias=False)
  d.pop('timestamp', None)
  if 'content' in d:
    d['content'] = dump_content(event.content)
  actions = _prune_empty(d.pop('actions', {}) or {})
  if actions:
    d['actions'] = actions
  node_info = _prune_empty(d.pop('node_info', {}) or {})
  if node_info:
    d['node_info'] = node_info
  lr = d.pop('long_running_tool_ids', None)
  if lr:
    d['long_running_tool_ids'] = sorted(lr)
  if event.output is not None:
    d['output'] = to_jsonable(event.output)
  return d


def reference_compaction_timestamps(d: dict[str, Any], event: Any,
                                    events: list[Any]) -> None:
  """Replaces a dumped compaction's timestamps by `ts:<event id>`.

  The id is that of the first other event of the session with exactly that
  timestamp (`ts:none` if none): timestamps are not deterministic, the
  events they delimit are.
  """
  compaction = event.actions.compaction if event.actions else None
  dc = (d.get('actions') or {}).get('compaction')
  if compaction is None or dc is None:
    return

  def ref(ts: float) -> str:
    for e in events:
      if not (e.actions and e.actions.compaction) and e.timestamp == ts:
        return 'ts:' + e.id
    return 'ts:none'

  dc['start_timestamp'] = ref(compaction.start_timestamp)
  dc['end_timestamp'] = ref(compaction.end_timestamp)


def _dump_session_event(event: Any, events: list[Any]) -> dict[str, Any]:
  d = dump_event(event)
  reference_compaction_timestamps(d, event, events)
  return d


def dump_exception(e: BaseException) -> dict[str, Any]:
  return {'type': type(e).__name__, 'message': str(e)}


# --------------------------------------------------------------------------
# Scripted model.
# --------------------------------------------------------------------------


class Script:
  """The shared script: responses in order, every request recorded."""

  def __init__(self, responses: list[Any], output_schema_and_tools: bool):
    self.responses = list(responses or [])
    self.used = [False] * len(self.responses)
    self.exhausted = False
    self.requests: list[dict[str, Any]] = []
    self.output_schema_and_tools = output_schema_and_tools
    self.turn = 0

  def pick(self, agent: Optional[str]) -> Optional[tuple[int, Any]]:
    """First unused response whose `agent` is absent or equals `agent`."""
    for i, spec in enumerate(self.responses):
      if self.used[i]:
        continue
      want = spec.get('agent') if isinstance(spec, dict) else None
      if want is not None and want != agent:
        continue
      self.used[i] = True
      return i, spec
    return None

  @property
  def used_count(self) -> int:
    return sum(self.used)

  def validate(self) -> None:
    for i, spec in enumerate(self.responses):
      where = f'model_responses[{i}]'
      if isinstance(spec, dict) and 'error' in spec:
        _check_keys(where, spec, {'error', 'error_type', 'agent'})
        _make_error(spec, 'error')
        continue
      build_llm_response(spec, where)
      if isinstance(spec, dict) and 'partials' in spec:
        if not isinstance(spec['partials'], list):
          raise ScenarioError(f'{where}.partials must be a list of strings')


class ScriptedLlm(BaseLlm):
  """A BaseLlm answering from the shared Script."""

  model_config = pydantic.ConfigDict(arbitrary_types_allowed=True)
  script: Any = pydantic.Field(default=None, exclude=True)

  @property
  def capabilities(self) -> LlmCapabilities:
    return LlmCapabilities(
        output_schema_and_tools=self.script.output_schema_and_tools)

  async def generate_content_async(self, llm_request, stream: bool = False):
    script: Script = self.script
    index = len(script.requests)
    recorded = dump_request(llm_request)
    recorded['turn'] = script.turn
    recorded['stream'] = bool(stream)
    script.requests.append(recorded)
    agent = (llm_request.config.labels or {}).get('adk_agent_name')
    pick = script.pick(agent)
    if pick is None:
      script.exhausted = True
      raise RuntimeError(
          f'scripted model: no response left for request #{index + 1}'
          f' (agent {agent})')
    pos, spec = pick
    recorded['response_index'] = pos
    where = f'model_responses[{pos}]'
    if isinstance(spec, dict) and 'error' in spec:
      raise _make_error(spec, 'error')
    if stream and isinstance(spec, dict):
      for chunk in spec.get('partials', []) or []:
        yield LlmResponse(
            content=types.Content(role='model', parts=[types.Part(text=chunk)]),
            partial=True)
    response = build_llm_response(spec, where)
    if stream:
      response.partial = False
    yield response


# --------------------------------------------------------------------------
# Callback behaviours (agent callbacks and plugins share the vocabulary).
# --------------------------------------------------------------------------

_BEHAVIOUR_KEYS = {
    'when', 'set_state', 'artifacts', 'escalate', 'transfer_to_agent',
    'set_args', 'append_instruction', 'raise', 'error_type', 'return',
}
# Hooks without a callback or tool context: no state, artifacts or actions.
_NO_CONTEXT_HOOKS = ('on_user_message', 'before_run', 'after_run', 'on_event',
                     'on_run_error')
_ARTIFACT_SAVE_KEYS = {'save', 'mime_type', 'text', 'data'}
_ARTIFACT_LOAD_KEYS = {'load', 'version'}


def check_artifact_ops(ops: Any, where: str) -> None:
  if not isinstance(ops, list):
    raise ScenarioError(f'{where}: expected a list of artifact operations')
  for i, op in enumerate(ops):
    w = f'{where}[{i}]'
    if not isinstance(op, dict):
      raise ScenarioError(f'{w}: expected a mapping')
    if 'save' in op:
      _check_keys(w, op, _ARTIFACT_SAVE_KEYS)
      if ('text' in op) == ('data' in op) or 'mime_type' not in op:
        raise ScenarioError(f'{w}: save needs mime_type and one of text, data')
    elif 'load' in op:
      _check_keys(w, op, _ARTIFACT_LOAD_KEYS)
    elif 'list' in op:
      _check_keys(w, op, {'list'})
    else:
      raise ScenarioError(f'{w}: one of save, load, list')


async def run_artifact_ops(ctx: Any, ops: list[Any]) -> list[Any]:
  """Runs artifact operations through a callback or tool context."""
  results: list[Any] = []
  for op in ops:
    if 'save' in op:
      data = (op['text'].encode('utf-8') if 'text' in op
              else base64.b64decode(op['data'], validate=True))
      results.append(await ctx.save_artifact(
          op['save'], types.Part.from_bytes(data=data,
                                            mime_type=op['mime_type'])))
    elif 'load' in op:
      part = await ctx.load_artifact(op['load'], version=op.get('version'))
      results.append(dump_model(part))
    else:
      results.append(list(await ctx.list_artifacts()))
  return results
_WHEN_KEYS = {'agent', 'tool', 'nth', 'author', 'error_contains'}

# What `return` means, by hook.
_CONTENT_HOOKS = {'before_agent', 'after_agent', 'before_run',
                  'on_user_message'}
_RESPONSE_HOOKS = {'before_model', 'after_model', 'on_model_error'}
_DICT_HOOKS = {'before_tool', 'after_tool', 'on_tool_error'}
_NONE_HOOKS = {'after_run', 'on_agent_error', 'on_run_error'}
# on_event returns the fields of a replacement event.
_EVENT_RETURN_KEYS = {'text', 'parts', 'role', 'custom_metadata'}


def build_event_update(spec: Any, where: str) -> dict[str, Any]:
  """The fields an on_event replacement sets: content, custom_metadata."""
  _check_keys(where, spec, _EVENT_RETURN_KEYS)
  fields: dict[str, Any] = {}
  if 'text' in spec or 'parts' in spec:
    fields['content'] = build_content(
        {k: spec[k] for k in ('text', 'parts', 'role') if k in spec}, where,
        'model')
  if 'custom_metadata' in spec:
    fields['custom_metadata'] = copy.deepcopy(spec['custom_metadata'])
  return fields
AGENT_HOOKS = ['before_agent', 'after_agent', 'before_model', 'after_model',
               'on_model_error', 'before_tool', 'after_tool', 'on_tool_error']
PLUGIN_HOOKS = ['on_user_message', 'before_run', 'after_run', 'on_event',
                'before_agent', 'after_agent', 'before_model', 'after_model',
                'on_model_error', 'before_tool', 'after_tool',
                'on_tool_error', 'on_agent_error', 'on_run_error']


class Behaviour:
  """One callback behaviour item from the scenario."""

  def __init__(self, hook: str, spec: Any, owner: str, index: int,
               log: list[dict[str, Any]]):
    where = f'{owner}.{hook}[{index}]'
    if spec is None:
      spec = {}
    _check_keys(where, spec, _BEHAVIOUR_KEYS)
    self.hook = hook
    self.spec = spec
    self.owner = owner
    self.index = index
    self.log = log
    self.calls = 0
    when = spec.get('when') or {}
    _check_keys(where + '.when', when, _WHEN_KEYS)
    self.when = when
    if 'return' in spec:
      r = spec['return']
      if hook in _CONTENT_HOOKS:
        build_content(r, where + '.return',
                      'user' if hook == 'on_user_message' else 'model')
      elif hook in _RESPONSE_HOOKS:
        build_llm_response(r, where + '.return')
      elif hook == 'on_event':
        build_event_update(r, where + '.return')
      elif hook in _NONE_HOOKS:
        raise ScenarioError(f'{where}: hook {hook} cannot return a value')
    if 'set_args' in spec and hook != 'before_tool':
      raise ScenarioError(f'{where}: set_args only for before_tool')
    if 'artifacts' in spec:
      check_artifact_ops(spec['artifacts'], where + '.artifacts')
    for k in ('artifacts', 'escalate', 'transfer_to_agent'):
      if k in spec and hook in _NO_CONTEXT_HOOKS:
        raise ScenarioError(f'{where}: {k} not supported for {hook}')
    if 'append_instruction' in spec and hook != 'before_model':
      raise ScenarioError(f'{where}: append_instruction only for before_model')
    if 'set_state' in spec and hook in ('on_user_message', 'before_run',
                                        'after_run', 'on_event',
                                        'on_run_error'):
      raise ScenarioError(f'{where}: set_state not supported for {hook}')

  def matches(self, info: dict[str, Any]) -> bool:
    w = self.when
    if 'agent' in w and info.get('agent') != w['agent']:
      return False
    if 'tool' in w and info.get('tool') != w['tool']:
      return False
    if 'author' in w and info.get('author') != w['author']:
      return False
    if 'error_contains' in w and w['error_contains'] not in (
        info.get('error') or ''):
      return False
    if 'nth' in w and self.calls != w['nth']:
      return False
    return True

  async def run(self, info: dict[str, Any], *, ctx: Any = None,
                args: Optional[dict[str, Any]] = None,
                llm_request: Any = None) -> Any:
    """Applies the behaviour; returns the hook's return value (or None)."""
    self.calls += 1
    matched = self.matches(info)
    entry = {'hook': self.hook, 'owner': self.owner, 'index': self.index,
             'matched': matched}
    for k in ('agent', 'tool', 'args', 'error', 'author'):
      if info.get(k) is not None:
        entry[k] = copy.deepcopy(info[k])
    self.log.append(entry)
    if not matched:
      return None
    spec = self.spec
    for k, v in (spec.get('set_state') or {}).items():
      ctx.state[k] = copy.deepcopy(v)
    if 'artifacts' in spec:
      entry['artifacts'] = await run_artifact_ops(ctx, spec['artifacts'])
    if spec.get('escalate'):
      ctx.actions.escalate = True
    if 'transfer_to_agent' in spec:
      ctx.actions.transfer_to_agent = spec['transfer_to_agent']
    if 'set_args' in spec:
      for k, v in spec['set_args'].items():
        args[k] = copy.deepcopy(v)
    if 'append_instruction' in spec:
      llm_request.append_instructions([spec['append_instruction']])
    if 'raise' in spec:
      raise _make_error(spec, 'raise')
    if 'return' not in spec:
      return None
    r = spec['return']
    where = f'{self.owner}.{self.hook}[{self.index}].return'
    if self.hook in _CONTENT_HOOKS:
      return build_content(r, where,
                           'user' if self.hook == 'on_user_message' else 'model')
    if self.hook in _RESPONSE_HOOKS:
      return build_llm_response(r, where)
    if self.hook == 'on_event':
      return build_event_update(r, where)
    return copy.deepcopy(r)


def _agent_name_of(ctx: Any) -> Optional[str]:
  try:
    return ctx.agent_name
  except Exception:  # pylint: disable=broad-except
    return None


def _make_agent_callback(hook: str, b: Behaviour):
  """A real ADK callback function for one behaviour item."""
  if hook in ('before_agent', 'after_agent'):
    async def cb(callback_context):
      return await b.run({'agent': _agent_name_of(callback_context)},
                   ctx=callback_context)
  elif hook == 'before_model':
    async def cb(callback_context, llm_request):
      return await b.run({'agent': _agent_name_of(callback_context)},
                   ctx=callback_context, llm_request=llm_request)
  elif hook == 'after_model':
    async def cb(callback_context, llm_response):
      return await b.run({'agent': _agent_name_of(callback_context)},
                   ctx=callback_context)
  elif hook == 'on_model_error':
    async def cb(callback_context, llm_request, error):
      return await b.run({'agent': _agent_name_of(callback_context),
                    'error': f'{type(error).__name__}: {error}'},
                   ctx=callback_context, llm_request=llm_request)
  elif hook == 'before_tool':
    async def cb(tool, args, tool_context):
      return await b.run({'agent': _agent_name_of(tool_context), 'tool': tool.name,
                    'args': args}, ctx=tool_context, args=args)
  elif hook == 'after_tool':
    async def cb(tool, args, tool_context, tool_response):
      return await b.run({'agent': _agent_name_of(tool_context), 'tool': tool.name,
                    'args': args}, ctx=tool_context, args=args)
  elif hook == 'on_tool_error':
    async def cb(tool, args, tool_context, error):
      return await b.run({'agent': _agent_name_of(tool_context), 'tool': tool.name,
                    'args': args, 'error': f'{type(error).__name__}: {error}'},
                   ctx=tool_context, args=args)
  else:
    raise ScenarioError(f'unknown agent callback hook {hook!r}')
  cb.__name__ = f'{b.owner}_{hook}_{b.index}'.replace(':', '_')
  return cb


async def _first_result(behaviours: list[Behaviour], info: dict[str, Any],
                        **kw: Any) -> Any:
  for b in behaviours:
    r = await b.run(info, **kw)
    if r is not None:
      return r
  return None


class ScenarioPlugin(BasePlugin):
  """A plugin whose hooks run the scenario's behaviour lists."""

  def __init__(self, name: str, hooks: dict[str, list[Behaviour]]):
    super().__init__(name=name)
    self._hooks = hooks

  def _b(self, hook: str) -> list[Behaviour]:
    return self._hooks.get(hook, [])

  async def on_user_message_callback(self, *, invocation_context,
                                     user_message):
    return await _first_result(self._b('on_user_message'),
                         {'agent': invocation_context.agent.name})

  async def before_run_callback(self, *, invocation_context):
    return await _first_result(self._b('before_run'),
                         {'agent': invocation_context.agent.name})

  async def after_run_callback(self, *, invocation_context):
    await _first_result(self._b('after_run'),
                  {'agent': invocation_context.agent.name})
    return None

  async def on_event_callback(self, *, invocation_context, event):
    fields = await _first_result(self._b('on_event'), {'author': event.author})
    if fields is None:
      return None
    from google.adk.events.event import Event  # pylint: disable=g-import-not-at-top
    return Event(author=event.author, **fields)

  async def before_agent_callback(self, *, agent, callback_context):
    return await _first_result(self._b('before_agent'), {'agent': agent.name},
                         ctx=callback_context)

  async def after_agent_callback(self, *, agent, callback_context):
    return await _first_result(self._b('after_agent'), {'agent': agent.name},
                         ctx=callback_context)

  async def before_model_callback(self, *, callback_context, llm_request):
    return await _first_result(self._b('before_model'),
                         {'agent': _agent_name_of(callback_context)},
                         ctx=callback_context, llm_request=llm_request)

  async def after_model_callback(self, *, callback_context, llm_response):
    return await _first_result(self._b('after_model'),
                         {'agent': _agent_name_of(callback_context)},
                         ctx=callback_context)

  async def on_model_error_callback(self, *, callback_context, llm_request,
                                    error):
    return await _first_result(self._b('on_model_error'),
                         {'agent': _agent_name_of(callback_context),
                          'error': f'{type(error).__name__}: {error}'},
                         ctx=callback_context, llm_request=llm_request)

  async def before_tool_callback(self, *, tool, tool_args, tool_context):
    return await _first_result(self._b('before_tool'),
                         {'agent': _agent_name_of(tool_context),
                          'tool': tool.name, 'args': tool_args},
                         ctx=tool_context, args=tool_args)

  async def after_tool_callback(self, *, tool, tool_args, tool_context,
                                result):
    return await _first_result(self._b('after_tool'),
                         {'agent': _agent_name_of(tool_context),
                          'tool': tool.name, 'args': tool_args},
                         ctx=tool_context, args=tool_args)

  async def on_tool_error_callback(self, *, tool, tool_args, tool_context,
                                   error):
    return await _first_result(self._b('on_tool_error'),
                         {'agent': _agent_name_of(tool_context),
                          'tool': tool.name, 'args': tool_args,
                          'error': f'{type(error).__name__}: {error}'},
                         ctx=tool_context, args=tool_args)

  async def on_agent_error_callback(self, *, agent, callback_context, error):
    await _first_result(self._b('on_agent_error'),
                  {'agent': agent.name,
                   'error': f'{type(error).__name__}: {error}'},
                  ctx=callback_context)

  async def on_run_error_callback(self, *, invocation_context, error):
    await _first_result(self._b('on_run_error'),
                  {'agent': invocation_context.agent.name,
                   'error': f'{type(error).__name__}: {error}'})


def build_behaviours(owner: str, hooks_spec: Any, allowed: list[str],
                     log: list[dict[str, Any]]) -> dict[str, list[Behaviour]]:
  if hooks_spec is None:
    return {}
  _check_keys(owner + '.callbacks', hooks_spec, set(allowed))
  out: dict[str, list[Behaviour]] = {}
  for hook, items in hooks_spec.items():
    if isinstance(items, dict) or items is None:
      items = [items]
    out[hook] = [Behaviour(hook, it, owner, i, log)
                 for i, it in enumerate(items)]
  return out


# --------------------------------------------------------------------------
# Tools.
# --------------------------------------------------------------------------

_PY_TYPES = {
    'string': 'str', 'integer': 'int', 'number': 'float',
    'boolean': 'bool', 'object': 'dict', 'array': 'list',
}
_TOOL_KEYS = {
    'name', 'description', 'parameters', 'long_running', 'return',
    'return_args', 'set_state', 'transfer_to_agent', 'escalate',
    'skip_summarization', 'raise', 'error_type', 'builtin',
    'request_confirmation', 'require_confirmation', 'artifacts',
    'return_artifacts',
}
_CONFIRMATION_KEYS = {'hint', 'payload'}
_PARAM_KEYS = {'type', 'default', 'optional', 'items'}
_IDENT = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')


def _annotation(pspec: dict[str, Any], where: str) -> str:
  t = pspec.get('type', 'string')
  if t not in _PY_TYPES:
    raise ScenarioError(f'{where}: unknown type {t!r}')
  ann = _PY_TYPES[t]
  if t == 'array' and 'items' in pspec:
    it = pspec['items']
    if it not in _PY_TYPES:
      raise ScenarioError(f'{where}: unknown items type {it!r}')
    ann = f'list[{_PY_TYPES[it]}]'
  return ann


def build_tool(spec: dict[str, Any], log: list[dict[str, Any]]):
  if 'builtin' in spec:
    _check_keys('tool', spec, {'builtin'})
    name = spec['builtin']
    if name == 'exit_loop':
      from google.adk.tools import exit_loop
      return exit_loop
    if name == 'load_memory':
      from google.adk.tools import load_memory
      return load_memory
    if name == 'preload_memory':
      from google.adk.tools import preload_memory
      return preload_memory
    if name == 'transfer_to_agent':
      from google.adk.tools import transfer_to_agent
      return transfer_to_agent
    if name == 'get_user_choice':
      from google.adk.tools import get_user_choice
      return get_user_choice
    if name == 'load_artifacts':
      from google.adk.tools import load_artifacts
      return load_artifacts
    if name in ('google_search', 'url_context', 'enterprise_web_search',
                'google_maps_grounding'):
      import google.adk.tools as adk_tools
      return getattr(adk_tools, name)
    raise ScenarioError(f'unknown builtin tool {name!r}')
  name = spec.get('name')
  where = f'tool {name}'
  _check_keys(where, spec, _TOOL_KEYS)
  if not name or not _IDENT.match(name):
    raise ScenarioError(f'{where}: name must be an identifier')
  confirm = spec.get('request_confirmation')
  if confirm is not None:
    if not isinstance(confirm, dict):
      raise ScenarioError(f'{where}.request_confirmation: expected a mapping')
    _check_keys(f'{where}.request_confirmation', confirm, _CONFIRMATION_KEYS)
  artifact_ops = spec.get('artifacts')
  if artifact_ops is not None:
    check_artifact_ops(artifact_ops, where + '.artifacts')
  params = spec.get('parameters') or {}
  sig_parts = []
  for pname, pspec in params.items():
    if not _IDENT.match(pname):
      raise ScenarioError(f'{where}: bad parameter name {pname!r}')
    if isinstance(pspec, str):
      pspec = {'type': pspec}
    _check_keys(f'{where}.{pname}', pspec, _PARAM_KEYS)
    ann = _annotation(pspec, f'{where}.{pname}')
    if 'default' in pspec:
      sig_parts.append(f'{pname}: {ann} = {pspec["default"]!r}')
    elif pspec.get('optional'):
      sig_parts.append(f'{pname}: Optional[{ann}] = None')
    else:
      sig_parts.append(f'{pname}: {ann}')
  sig_parts.append('tool_context: ToolContext')
  # Keyword-only parameters allow any order of required/optional ones.
  src = f'async def {name}(*, {", ".join(sig_parts)}):\n'
  if spec.get('description') is not None:
    src += f'  {spec["description"]!r}\n'
  src += '  return await __impl(locals())\n'

  async def impl(local_vars: dict[str, Any]) -> Any:
    tool_context = local_vars.pop('tool_context')
    args = {k: local_vars[k] for k in params}
    entry = {'hook': 'tool', 'owner': f'tool:{name}',
             'agent': tool_context.agent_name, 'tool': name,
             'args': copy.deepcopy(args)}
    if tool_context.tool_confirmation is not None:
      entry['confirmation'] = tool_context.tool_confirmation.model_dump(
          mode='json', exclude_none=True)
    log.append(entry)
    if confirm is not None and tool_context.tool_confirmation is None:
      tool_context.request_confirmation(
          hint=confirm.get('hint'), payload=copy.deepcopy(confirm.get('payload')))
      return {'status': 'confirmation requested'}
    if confirm is not None and not tool_context.tool_confirmation.confirmed:
      return {'status': 'rejected'}
    for k, v in (spec.get('set_state') or {}).items():
      tool_context.state[k] = copy.deepcopy(v)
    artifact_results = None
    if artifact_ops is not None:
      artifact_results = await run_artifact_ops(tool_context, artifact_ops)
    if 'transfer_to_agent' in spec:
      tool_context.actions.transfer_to_agent = spec['transfer_to_agent']
    if spec.get('escalate'):
      tool_context.actions.escalate = True
    if spec.get('skip_summarization'):
      tool_context.actions.skip_summarization = True
    if 'raise' in spec:
      raise _make_error(spec, 'raise')
    if spec.get('return_args'):
      return args
    if spec.get('return_artifacts'):
      return {'artifacts': artifact_results}
    if 'return' in spec:
      return copy.deepcopy(spec['return'])
    return None

  namespace: dict[str, Any] = {
      '__impl': impl, 'ToolContext': ToolContext, 'Optional': Optional,
  }
  exec(compile(src, f'<tool {name}>', 'exec'), namespace)  # pylint: disable=exec-used
  func = namespace[name]
  func.__module__ = 'conformance_tools'
  if spec.get('long_running'):
    if spec.get('require_confirmation'):
      raise ScenarioError(f'{where}: require_confirmation needs a non-long-running tool')
    return LongRunningFunctionTool(func)
  return FunctionTool(func, require_confirmation=bool(spec.get('require_confirmation')))


# --------------------------------------------------------------------------
# Output schema -> pydantic model.
# --------------------------------------------------------------------------


def _schema_type(pspec: dict[str, Any], where: str, name_hint: str) -> Any:
  t = pspec.get('type', 'string')
  if t == 'string':
    return str
  if t == 'integer':
    return int
  if t == 'number':
    return float
  if t == 'boolean':
    return bool
  if t == 'array':
    items = pspec.get('items') or {'type': 'string'}
    if isinstance(items, str):
      items = {'type': items}
    return list[_schema_type(items, where + '.items', name_hint + 'Item')]
  if t == 'object':
    if 'properties' in pspec:
      return build_pydantic_model(pspec, where, name_hint)
    return dict
  raise ScenarioError(f'{where}: unknown type {t!r}')


def build_pydantic_model(spec: dict[str, Any], where: str,
                         default_title: str) -> type[pydantic.BaseModel]:
  _check_keys(where, spec, {'title', 'type', 'properties', 'required',
                            'description'})
  title = spec.get('title', default_title)
  required = set(spec.get('required', list((spec.get('properties') or {}))))
  fields: dict[str, Any] = {}
  for pname, pspec in (spec.get('properties') or {}).items():
    if isinstance(pspec, str):
      pspec = {'type': pspec}
    _check_keys(f'{where}.{pname}', pspec,
                {'type', 'description', 'items', 'properties', 'required',
                 'title'})
    ann = _schema_type(pspec, f'{where}.{pname}', title + pname.title())
    fkw = {}
    if 'description' in pspec:
      fkw['description'] = pspec['description']
    if pname in required:
      fields[pname] = (ann, pydantic.Field(**fkw))
    else:
      fields[pname] = (Optional[ann], pydantic.Field(default=None, **fkw))
  model = pydantic.create_model(title, **fields)
  if spec.get('description'):
    model.__doc__ = spec['description']
  return model


# --------------------------------------------------------------------------
# Agent tree.
# --------------------------------------------------------------------------

_COMMON_AGENT_KEYS = {'type', 'name', 'description', 'sub_agents', 'callbacks'}
_LLM_KEYS = _COMMON_AGENT_KEYS | {
    'model', 'instruction', 'static_instruction', 'global_instruction',
    'instruction_provider', 'global_instruction_provider',
    'include_contents', 'output_key', 'output_schema',
    'disallow_transfer_to_parent', 'disallow_transfer_to_peers', 'planner',
    'generate_content_config', 'tools', 'mode', 'code_executor',
}


def _instruction_provider(text: str):
  """An InstructionProvider returning text (google-adk uses it as is)."""

  def provider(readonly_context):
    del readonly_context
    return text

  return provider


class Builder:

  def __init__(self, script: Script, log: list[dict[str, Any]]):
    self.script = script
    self.log = log
    self.names: set[str] = set()

  def model(self, name: str) -> ScriptedLlm:
    return ScriptedLlm(model=name, script=self.script)

  def tool(self, spec: dict[str, Any]):
    if 'agent_tool' in spec:
      _check_keys('tool', spec, {'agent_tool'})
      at = spec['agent_tool']
      _check_keys('agent_tool', at, {'agent', 'skip_summarization'})
      from google.adk.tools.agent_tool import AgentTool
      return AgentTool(agent=self.agent(at['agent']),
                       skip_summarization=bool(at.get('skip_summarization')))
    if 'example_tool' in spec:
      _check_keys('tool', spec, {'example_tool'})
      et = spec['example_tool']
      _check_keys('example_tool', et, {'examples'})
      from google.adk.examples.example import Example
      from google.adk.tools.example_tool import ExampleTool
      examples = []
      for i, ex in enumerate(et.get('examples') or []):
        where = f'example_tool.examples[{i}]'
        _check_keys(where, ex, {'input', 'output'})
        examples.append(Example(
            input=build_content(ex['input'], where + '.input', 'user'),
            output=[build_content(o, f'{where}.output[{j}]', 'model')
                    for j, o in enumerate(ex.get('output') or [])]))
      return ExampleTool(examples=examples)
    return build_tool(spec, self.log)

  def agent(self, spec: dict[str, Any]):
    kind = spec.get('type', 'LlmAgent')
    name = spec.get('name')
    where = f'agent {name}'
    if not name:
      raise ScenarioError('agent without name')
    if name in self.names:
      raise ScenarioError(f'duplicate agent name {name!r}')
    self.names.add(name)
    subs = [self.agent(s) for s in spec.get('sub_agents', []) or []]
    allowed_hooks = (AGENT_HOOKS if kind == 'LlmAgent'
                     else ['before_agent', 'after_agent'])
    hooks = build_behaviours(f'agent:{name}', spec.get('callbacks'),
                             allowed_hooks, self.log)
    kwargs: dict[str, Any] = {'name': name, 'sub_agents': subs}
    if 'description' in spec:
      kwargs['description'] = spec['description']
    for hook, bs in hooks.items():
      kwargs[f'{hook}_callback'] = [_make_agent_callback(hook, b) for b in bs]

    if kind == 'LlmAgent':
      _check_keys(where, spec, _LLM_KEYS)
      if 'model' in spec:
        kwargs['model'] = self.model(spec['model'])
      for k in ('instruction', 'global_instruction', 'include_contents',
                'output_key', 'disallow_transfer_to_parent',
                'disallow_transfer_to_peers', 'mode'):
        if k in spec:
          kwargs[k] = spec[k]
      for key, target in (('instruction_provider', 'instruction'),
                          ('global_instruction_provider',
                           'global_instruction')):
        if key in spec:
          if target in spec:
            raise ScenarioError(
                f'{where}: give an instruction or its provider, not both')
          kwargs[target] = _instruction_provider(spec[key])
      if 'static_instruction' in spec:
        si = spec['static_instruction']
        kwargs['static_instruction'] = (
            si if isinstance(si, str)
            else build_content(si, where + '.static_instruction', 'user'))
      if 'output_schema' in spec:
        kwargs['output_schema'] = build_pydantic_model(
            spec['output_schema'], where + '.output_schema',
            f'{name[0].upper()}{name[1:]}Output')
      if 'planner' in spec:
        p = spec['planner']
        if p == 'plan_react':
          kwargs['planner'] = PlanReActPlanner()
        elif isinstance(p, dict) and 'built_in' in p:
          kwargs['planner'] = BuiltInPlanner(
              thinking_config=types.ThinkingConfig(**(p['built_in'] or {})))
        else:
          raise ScenarioError(f'{where}: unknown planner {p!r}')
      if 'code_executor' in spec:
        if spec['code_executor'] != 'built_in':
          raise ScenarioError(f'{where}: unknown code_executor '
                              f'{spec["code_executor"]!r}')
        from google.adk.code_executors import BuiltInCodeExecutor  # pylint: disable=g-import-not-at-top
        kwargs['code_executor'] = BuiltInCodeExecutor()
      if 'generate_content_config' in spec:
        kwargs['generate_content_config'] = types.GenerateContentConfig(
            **spec['generate_content_config'])
      kwargs['tools'] = [self.tool(t) for t in spec.get('tools', []) or []]
      return LlmAgent(**kwargs)
    if kind == 'SequentialAgent':
      _check_keys(where, spec, _COMMON_AGENT_KEYS)
      return SequentialAgent(**kwargs)
    if kind == 'ParallelAgent':
      _check_keys(where, spec, _COMMON_AGENT_KEYS)
      return ParallelAgent(**kwargs)
    if kind == 'LoopAgent':
      _check_keys(where, spec, _COMMON_AGENT_KEYS | {'max_iterations'})
      if 'max_iterations' in spec:
        kwargs['max_iterations'] = spec['max_iterations']
      return LoopAgent(**kwargs)
    raise ScenarioError(f'{where}: unknown agent type {kind!r}')


# --------------------------------------------------------------------------
# Running a scenario.
# --------------------------------------------------------------------------

_SCENARIO_KEYS = {
    'name', 'description', 'initial_state', 'run_config', 'sessions',
    'agent', 'plugins', 'model_responses', 'turns', 'model_capabilities',
    'resumable', 'compaction', 'artifacts',
}
_ARTIFACT_KEYS = {'name', 'mime_type', 'text', 'data', 'session'}
_COMPACTION_KEYS = {'compaction_interval', 'overlap_size', 'token_threshold',
                    'event_retention_size'}
_TURN_KEYS = {'text', 'parts', 'function_response', 'state_delta', 'session',
              'run_config', 'resume_turn', 'rewind_before_turn',
              'abort_after_events', 'add_session_to_memory'}
_RUN_CONFIG_KEYS = {'max_llm_calls', 'streaming_mode', 'custom_metadata',
                    'save_input_blobs_as_artifacts'}


def build_run_config(spec: Optional[dict[str, Any]]) -> RunConfig:
  spec = spec or {}
  _check_keys('run_config', spec, _RUN_CONFIG_KEYS)
  kwargs: dict[str, Any] = {}
  if 'max_llm_calls' in spec:
    kwargs['max_llm_calls'] = spec['max_llm_calls']
  if 'custom_metadata' in spec:
    kwargs['custom_metadata'] = copy.deepcopy(spec['custom_metadata'])
  if 'save_input_blobs_as_artifacts' in spec:
    kwargs['save_input_blobs_as_artifacts'] = bool(
        spec['save_input_blobs_as_artifacts'])
  mode = spec.get('streaming_mode', 'none')
  if mode == 'none':
    kwargs['streaming_mode'] = StreamingMode.NONE
  elif mode == 'sse':
    kwargs['streaming_mode'] = StreamingMode.SSE
  else:
    raise ScenarioError(f'unknown streaming_mode {mode!r}')
  return RunConfig(**kwargs)


def _find_call_id(events: list[Any], name: str) -> Optional[str]:
  for event in reversed(events):
    for fc in event.get_function_calls():
      if fc.name == name:
        return fc.id
  return None


def build_user_message(turn: dict[str, Any], where: str,
                       session_events: list[Any]) -> types.Content:
  parts: list[types.Part] = []
  if 'text' in turn:
    parts.append(types.Part(text=turn['text']))
  frs = turn.get('function_response')
  if frs is not None:
    if isinstance(frs, dict):
      frs = [frs]
    for i, fr in enumerate(frs):
      _check_keys(f'{where}.function_response[{i}]', fr,
                  {'name', 'id', 'call', 'response'})
      fid = fr.get('id')
      if 'call' in fr:
        fid = _find_call_id(session_events, fr['call'])
        if fid is None:
          raise ScenarioError(
              f'{where}: no function call named {fr["call"]!r} to answer')
      parts.append(types.Part(function_response=types.FunctionResponse(
          name=fr['name'], id=fid, response=fr.get('response', {}))))
  for i, p in enumerate(turn.get('parts', []) or []):
    parts.append(build_part(p, f'{where}.parts[{i}]'))
  if not parts and 'resume_turn' in turn:
    return None  # resuming without a message
  return types.Content(role='user', parts=parts)


async def run_scenario_async(scn: dict[str, Any]) -> dict[str, Any]:
  _check_keys('scenario', scn, _SCENARIO_KEYS)
  if not scn.get('name'):
    raise ScenarioError('scenario needs a name')
  caps = scn.get('model_capabilities') or {}
  _check_keys('model_capabilities', caps, {'output_schema_and_tools'})
  script = Script(scn.get('model_responses') or [],
                  bool(caps.get('output_schema_and_tools', False)))
  script.validate()
  log: list[dict[str, Any]] = []
  builder = Builder(script, log)
  # Agents without a model (and no ancestor model) fall back to the default
  # model; make that a scripted model too.
  LlmAgent.set_default_model(builder.model(LlmAgent.DEFAULT_MODEL))
  root = builder.agent(scn['agent'])

  plugins = []
  for i, pspec in enumerate(scn.get('plugins') or []):
    _check_keys(f'plugins[{i}]', pspec, {'name', 'callbacks'})
    hooks = build_behaviours(f'plugin:{pspec["name"]}',
                             pspec.get('callbacks'), PLUGIN_HOOKS, log)
    plugins.append(ScenarioPlugin(pspec['name'], hooks))

  from google.adk.runners import Runner  # pylint: disable=g-import-not-at-top
  app_kwargs: dict[str, Any] = {}
  if scn.get('resumable'):
    from google.adk.apps.app import ResumabilityConfig  # pylint: disable=g-import-not-at-top
    app_kwargs['resumability_config'] = ResumabilityConfig(is_resumable=True)
  if scn.get('compaction') is not None:
    from google.adk.apps.app import EventsCompactionConfig  # pylint: disable=g-import-not-at-top
    _check_keys('compaction', scn['compaction'], _COMPACTION_KEYS)
    # No summarizer: ADK summarizes with the root agent's (scripted) model.
    app_kwargs['events_compaction_config'] = EventsCompactionConfig(
        **scn['compaction'])
  app = App(name=APP_NAME, root_agent=root, plugins=plugins, **app_kwargs)
  session_service = InMemorySessionService()
  from google.adk.memory import InMemoryMemoryService  # pylint: disable=g-import-not-at-top
  memory_service = InMemoryMemoryService()
  artifact_service = None
  if scn.get('artifacts') is not None:
    from google.adk.artifacts import InMemoryArtifactService  # pylint: disable=g-import-not-at-top
    artifact_service = InMemoryArtifactService()
  runner = Runner(app=app, session_service=session_service,
                  memory_service=memory_service,
                  artifact_service=artifact_service)

  # Sessions.
  if 'sessions' in scn:
    if 'initial_state' in scn:
      raise ScenarioError('use sessions[].initial_state with sessions')
    sess_specs = scn['sessions']
  else:
    sess_specs = [{'id': DEFAULT_SESSION_ID,
                   'initial_state': scn.get('initial_state')}]
  sessions: list[dict[str, Any]] = []
  for i, s in enumerate(sess_specs):
    _check_keys(f'sessions[{i}]', s, {'id', 'user_id', 'initial_state'})
    sid = s.get('id') or f's{i + 1}'
    uid = s.get('user_id', DEFAULT_USER_ID)
    await session_service.create_session(
        app_name=APP_NAME, user_id=uid, session_id=sid,
        state=copy.deepcopy(s.get('initial_state')) or None)
    sessions.append({'id': sid, 'user_id': uid})
  by_id = {s['id']: s for s in sessions}

  # Artifacts, saved before the first turn (no event records them).
  for i, a in enumerate(scn.get('artifacts') or []):
    where = f'artifacts[{i}]'
    _check_keys(where, a, _ARTIFACT_KEYS)
    if ('text' in a) == ('data' in a):
      raise ScenarioError(f'{where}: exactly one of text and data')
    data = (a['text'].encode('utf-8') if 'text' in a
            else base64.b64decode(a['data'], validate=True))
    sess = by_id.get(a.get('session', sessions[0]['id']))
    if sess is None:
      raise ScenarioError(f'{where}: unknown session {a.get("session")!r}')
    await artifact_service.save_artifact(
        app_name=APP_NAME, user_id=sess['user_id'], session_id=sess['id'],
        filename=a['name'],
        artifact=types.Part.from_bytes(data=data, mime_type=a['mime_type']))

  default_rc = scn.get('run_config')
  build_run_config(default_rc)  # validate early
  turns_out = []
  yielded: dict[str, list[Any]] = {s['id']: [] for s in sessions}
  turn_invocations: list[Optional[str]] = [None] * len(scn.get('turns') or [])
  for ti, turn in enumerate(scn.get('turns') or []):
    where = f'turns[{ti}]'
    if isinstance(turn, str):
      turn = {'text': turn}
    _check_keys(where, turn, _TURN_KEYS)
    sid = turn.get('session', sessions[0]['id'])
    if sid not in by_id:
      raise ScenarioError(f'{where}: unknown session {sid!r}')
    uid = by_id[sid]['user_id']
    script.turn = ti
    if 'add_session_to_memory' in turn:
      # Not a message: the session, as stored now, goes into the memory
      # service (what an app does with memory_service.add_session_to_memory).
      if set(turn) != {'add_session_to_memory'}:
        raise ScenarioError(f'{where}: add_session_to_memory takes no other key')
      msid = turn['add_session_to_memory']
      if msid not in by_id:
        raise ScenarioError(f'{where}.add_session_to_memory: unknown session {msid!r}')
      sess = await session_service.get_session(
          app_name=APP_NAME, user_id=by_id[msid]['user_id'], session_id=msid)
      await memory_service.add_session_to_memory(sess)
      turns_out.append({'index': ti, 'session': msid,
                        'add_session_to_memory': msid, 'events': []})
      continue
    if 'rewind_before_turn' in turn:
      # A rewind instead of a message: Runner.rewind_async to before that
      # earlier turn's invocation.
      if set(turn) - {'rewind_before_turn', 'session'}:
        raise ScenarioError(f'{where}: rewind_before_turn takes only session')
      rt = turn['rewind_before_turn']
      if not isinstance(rt, int) or not 0 <= rt < ti:
        raise ScenarioError(f'{where}.rewind_before_turn: {rt!r} is not an earlier turn')
      out = {'index': ti, 'session': sid, 'rewind_before_turn': rt, 'events': []}
      try:
        await runner.rewind_async(user_id=uid, session_id=sid,
                                  rewind_before_invocation_id=turn_invocations[rt])
      except Exception as e:  # pylint: disable=broad-except
        out['error'] = dump_exception(e)
      turns_out.append(out)
      continue
    rc_spec = dict(default_rc or {})
    rc_spec.update(turn.get('run_config') or {})
    run_config = build_run_config(rc_spec)
    message = build_user_message(turn, where, yielded[sid])
    invocation_id = None
    if 'resume_turn' in turn:
      rt = turn['resume_turn']
      if not isinstance(rt, int) or not 0 <= rt < ti:
        raise ScenarioError(f'{where}.resume_turn: {rt!r} is not an earlier turn')
      invocation_id = turn_invocations[rt]
    out: dict[str, Any] = {'index': ti, 'session': sid,
                           'user_content': dump_content(message)}
    if turn.get('state_delta'):
      out['state_delta'] = to_jsonable(turn['state_delta'])
    events = []
    # abort_after_events: the client aborts the run (run_async's
    # abort_signal) once it has received that many events, and reads on.
    abort_after = turn.get('abort_after_events')
    if abort_after is not None and (not isinstance(abort_after, int) or abort_after < 1):
      raise ScenarioError(f'{where}.abort_after_events: {abort_after!r} is not a positive count')
    abort_kwargs = {}
    if abort_after is not None:
      abort_kwargs['abort_signal'] = asyncio.Event()
    try:
      async for event in runner.run_async(
          user_id=uid, session_id=sid, new_message=message,
          invocation_id=invocation_id,
          state_delta=copy.deepcopy(turn.get('state_delta')) or None,
          run_config=run_config, **abort_kwargs):
        yielded[sid].append(event)
        events.append(dump_event(event))
        if turn_invocations[ti] is None:
          turn_invocations[ti] = event.invocation_id
        if abort_after is not None and len(events) == abort_after:
          abort_kwargs['abort_signal'].set()
    except Exception as e:  # pylint: disable=broad-except
      out['error'] = dump_exception(e)
      if os.environ.get('CONFORMANCE_DEBUG'):
        traceback.print_exc()
    out['events'] = events
    turns_out.append(out)

  final_state: dict[str, Any] = {}
  sessions_out = []
  for s in sessions:
    sess = await session_service.get_session(
        app_name=APP_NAME, user_id=s['user_id'], session_id=s['id'])
    final_state[s['id']] = to_jsonable(dict(sess.state))
    sessions_out.append({
        'id': s['id'], 'user_id': s['user_id'],
        'events': [_dump_session_event(e, sess.events) for e in sess.events],
    })
  await runner.close()
  if script.exhausted:
    raise ScenarioError(
        'the scripted model ran out of responses (see llm_requests); add'
        ' model_responses to the scenario')

  event_ids = set()
  for evs in yielded.values():
    event_ids.update(e.id for e in evs if e.id)
  memory_times: dict[str, str] = {}
  for s in sessions:
    sess = await session_service.get_session(
        app_name=APP_NAME, user_id=s['user_id'], session_id=s['id'])
    event_ids.update(e.id for e in sess.events if e.id)
    for e in sess.events:
      if not (e.actions and e.actions.compaction):
        memory_times.setdefault(format_memory_timestamp(e.timestamp), e.id)

  trace = {
      'name': scn['name'],
      'turns': turns_out,
      'llm_requests': script.requests,
      'callback_log': log,
      'final_state': final_state,
      'sessions': sessions_out,
      'model_responses_used': script.used_count,
  }
  return normalize(trace, event_ids, memory_times)


# --------------------------------------------------------------------------
# Normalization.
# --------------------------------------------------------------------------

_UUID = r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
_ID_RE = re.compile(r'(adk-|e-)?(' + _UUID + r')')


# A memory's timestamp as google-adk writes it (datetime.isoformat of a
# naive local time): in load_memory's response and preload_memory's
# "Time:" lines.
_MEMORY_TS_RE = re.compile(
    r'\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{6})?')


def format_memory_timestamp(ts: float) -> str:
  from google.adk.memory import _utils  # pylint: disable=g-import-not-at-top
  return _utils.format_timestamp(ts)


def normalize(trace: dict[str, Any], event_ids: set[str],
              memory_times: Optional[dict[str, str]] = None) -> str:
  """Serializes, then replaces generated ids by placeholders in text order.

  Memory timestamps become `ts:<id>` of the first session event with that
  formatted time (`ts:none` if none), before the ids are replaced.
  """
  text = json.dumps(trace, indent=2, sort_keys=True, ensure_ascii=False)
  if memory_times is not None:
    text = _MEMORY_TS_RE.sub(
        lambda m: 'ts:' + memory_times.get(m.group(0), 'none'), text)
  maps: dict[str, dict[str, str]] = {'adk': {}, 'inv': {}, 'evt': {},
                                     'uuid': {}}

  def repl(m: re.Match[str]) -> str:
    prefix, u = m.group(1), m.group(2)
    if prefix == 'adk-':
      kind, key = 'adk', u
    elif prefix == 'e-':
      kind, key = 'inv', u
    elif u in event_ids:
      kind, key = 'evt', u
    else:
      kind, key = 'uuid', u
    table = maps[kind]
    if key not in table:
      table[key] = f'{kind}-{len(table) + 1}'
    return table[key]

  return _ID_RE.sub(repl, text) + '\n'


class _CoreSchemaLoader(yaml.SafeLoader):
  """SafeLoader restricted to YAML 1.2 core-schema plain-scalar resolution.

  PyYAML implements YAML 1.1 (yes/no/on/off are booleans, 010 is octal,
  2024-01-01 is a date, 1e3 is a string). Go's gopkg.in/yaml.v3 follows YAML
  1.2. To make both runners read scenarios identically, plain scalars resolve
  only to: null (~, null, Null, NULL, empty), bool (true/True/TRUE/false/
  False/FALSE), decimal int, float (core-schema syntax, .inf, .nan), else str.
  """


_CoreSchemaLoader.yaml_implicit_resolvers = {}
_CoreSchemaLoader.add_implicit_resolver(
    'tag:yaml.org,2002:null', re.compile(r'^(?:~|null|Null|NULL|)$'),
    ['~', 'n', 'N', ''])
_CoreSchemaLoader.add_implicit_resolver(
    'tag:yaml.org,2002:bool',
    re.compile(r'^(?:true|True|TRUE|false|False|FALSE)$'), list('tTfF'))
_CoreSchemaLoader.add_implicit_resolver(
    'tag:yaml.org,2002:int', re.compile(r'^[-+]?[0-9]+$'),
    list('-+0123456789'))
_CoreSchemaLoader.add_implicit_resolver(
    'tag:yaml.org,2002:float',
    re.compile(r'^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?'
               r'|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$'),
    list('-+0123456789.'))


def _construct_core_int(loader, node):
  return int(loader.construct_scalar(node), 10)


def _construct_core_float(loader, node):
  value = loader.construct_scalar(node).lower()
  if value.endswith('.inf'):
    return float('-inf') if value.startswith('-') else float('inf')
  if value == '.nan':
    return float('nan')
  return float(value)


_CoreSchemaLoader.add_constructor('tag:yaml.org,2002:int', _construct_core_int)
_CoreSchemaLoader.add_constructor('tag:yaml.org,2002:float',
                                  _construct_core_float)


def load_scenario(path: str) -> dict[str, Any]:
  with open(path, encoding='utf-8') as f:
    return yaml.load(f, Loader=_CoreSchemaLoader)  # nosec: safe loader


def run_scenario_file(path: str) -> str:
  scn = load_scenario(path)
  return asyncio.run(run_scenario_async(scn))


def main(argv: Optional[list[str]] = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('scenario', nargs='?', help='scenario YAML file')
  parser.add_argument('-o', '--output', help='write the trace to this file')
  parser.add_argument('--dir', help='directory of scenario YAML files')
  parser.add_argument('--out', help='directory for <name>.json traces')
  args = parser.parse_args(argv)

  logging.basicConfig(
      level=logging.DEBUG if os.environ.get('CONFORMANCE_DEBUG')
      else logging.CRITICAL)
  warnings.simplefilter('ignore')

  if args.dir:
    if not args.out:
      parser.error('--dir requires --out')
    os.makedirs(args.out, exist_ok=True)
    failures = 0
    for fname in sorted(os.listdir(args.dir)):
      if not fname.endswith(('.yaml', '.yml')):
        continue
      path = os.path.join(args.dir, fname)
      try:
        scn = load_scenario(path)
        text = asyncio.run(run_scenario_async(scn))
      except (ScenarioError, yaml.YAMLError) as e:
        print(f'FAIL {fname}: {type(e).__name__}: {e}', file=sys.stderr)
        failures += 1
        continue
      out_path = os.path.join(args.out, f'{scn["name"]}.json')
      with open(out_path, 'w', encoding='utf-8') as f:
        f.write(text)
      print(f'ok   {fname} -> {out_path}', file=sys.stderr)
    return 1 if failures else 0

  if not args.scenario:
    parser.error('give a scenario file or --dir/--out')
  try:
    text = run_scenario_file(args.scenario)
  except (ScenarioError, yaml.YAMLError) as e:
    print(f'FAIL {args.scenario}: {type(e).__name__}: {e}', file=sys.stderr)
    return 1
  if args.output:
    with open(args.output, 'w', encoding='utf-8') as f:
      f.write(text)
  else:
    sys.stdout.write(text)
  return 0


if __name__ == '__main__':
  sys.exit(main())
