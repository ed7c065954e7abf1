"""What the Python SDK flow scripts (python-sdk-flows.py, python-wire-flows.py) share: the
input they send and how they read the messages that come back."""


def said(values):
    """[(type, content)] of a state's messages, whether they came back as dicts or objects."""
    pairs = []
    for message in (values or {}).get("messages", []):
        if isinstance(message, dict):
            pairs.append([message.get("type"), message.get("content")])
        else:
            pairs.append([message.type, message.content])
    return pairs


def user(text):
    return {"messages": [{"role": "user", "content": text}]}
