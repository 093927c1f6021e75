import json, sys
from google.adk.utils.streaming_utils import _JsonPathTracker
cases = [
  ['{"city": "Pa', 'ris", "days": 3', ', "tags": ["a", "b', '"], "opts": {"x": true, "y": null}}'],
  ['{"', 'q', '": "hel', 'lo wor', 'ld', '"}'],
  ['{"text": "line1\\', 'nline2", "n": 1', '2.5}'],
  ['  {"a": {"b": {"c": "deep"}}, "it\'s k": [1, {"z": "w"}], "e": {}, "f": []}'],
  ['{"a": "x"}', '{"b": "y"}'],
  ['{"s": "é', 'ü", "k": fal', 'se}'],
]
out = []
for chunks in cases:
  t = _JsonPathTracker()
  res = []
  for c in chunks:
    res.append([a.model_dump(mode='json', exclude_none=True) for a in t.handle_chunk(c)])
  out.append({'chunks': chunks, 'args': res})
json.dump(out, sys.stdout, ensure_ascii=False, indent=1)
