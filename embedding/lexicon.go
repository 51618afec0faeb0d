package embedding

import (
	"strings"

	"mneme/tokens"
)

// conceptGroups is a small bilingual lexicon of customer-service and B2B
// commerce terms. Every word of a group also counts as the group's first
// (English) word, its head, so "reply" meets "answer" and "预算" meets
// "budget" although they share no letters. English entries are matched after
// stemming; Chinese entries as substrings of a CJK run. Keep it small and
// about the domain: every entry is a claim that two words mean the same thing
// in a memory.
var conceptGroups = [][]string{
	{"budget", "预算"},
	{"answer", "reply", "response", "respond", "回答", "回复", "答复"},
	{"prefer", "preference", "like", "want", "wish", "favourite", "favorite", "喜欢", "偏好", "倾向", "希望"},
	{"short", "brief", "concise", "succinct", "简短", "简洁", "简明"},
	{"detailed", "verbose", "详细"},
	{"order", "订单", "下单"},
	{"ship", "shipment", "deliver", "delivery", "dispatch", "logistics", "courier", "发货", "配送", "物流", "送货", "快递"},
	{"arrive", "arrival", "到货", "到达", "送达"},
	{"refund", "退款"},
	{"return", "退货"},
	{"invoice", "发票"},
	{"price", "pricing", "quote", "quotation", "价格", "报价", "单价"},
	{"cost", "成本"},
	{"approval", "approve", "approver", "审批", "批准"},
	{"member", "membership", "会员"},
	{"expire", "expiry", "expiration", "到期", "过期"},
	{"renew", "renewal", "续费", "续约"},
	{"contract", "agreement", "合同", "协议"},
	{"pay", "payment", "paid", "付款", "支付", "账期"},
	{"discount", "折扣", "优惠"},
	{"address", "地址"},
	{"phone", "mobile", "telephone", "call", "电话", "手机"},
	{"email", "邮件", "邮箱"},
	{"customer", "client", "buyer", "客户", "买家"},
	{"company", "firm", "公司", "企业"},
	{"warehouse", "inventory", "仓库", "库存"},
	{"quantity", "数量"},
	{"product", "item", "产品", "商品", "货物"},
	{"delay", "delayed", "late", "延迟", "延误", "推迟"},
	{"cancel", "cancellation", "取消"},
	{"complaint", "complain", "投诉"},
	{"urgent", "rush", "expedite", "加急", "紧急"},
	{"status", "progress", "状态", "进度"},
	{"credit", "授信", "额度"},
	{"tax", "vat", "税号", "税率"},
	{"margin", "毛利"},
	{"contact", "联系"},
	{"communicate", "communication", "沟通", "交流"},
	{"language", "语言"},
	{"chinese", "中文"},
	{"english", "英文", "英语"},
	{"wechat", "微信"},
	{"procurement", "purchase", "purchasing", "采购", "购买"},
	{"annual", "yearly", "年度", "全年"},
	{"style", "风格"},
	{"chair", "椅子", "座椅", "办公椅"},
	{"office", "办公"},
	{"morning", "上午", "早上"},
	{"manager", "经理"},
	{"east", "华东"},
	{"china", "中国"},
	{"province", "省份"},
	{"region", "area", "区域", "地区"},
	{"shanghai", "上海"},
	{"jiangsu", "江苏"},
	{"zhejiang", "浙江"},
	{"anhui", "安徽"},
	{"hangzhou", "杭州"},
	{"suzhou", "苏州"},
	{"beijing", "北京"},
	{"shenzhen", "深圳"},
	{"guangzhou", "广州"},
}

// lexicon maps an English stem or a Chinese word to the stem of its group's
// head word.
type lexicon struct {
	english map[string]string // stem → head stem, only where they differ
	chinese tokens.Dict       // word → head stem
}

// concepts is built once from conceptGroups and only read afterwards, so
// Builtin stays safe for concurrent use.
var concepts = newLexicon(conceptGroups)

func newLexicon(groups [][]string) lexicon {
	lx := lexicon{english: map[string]string{}, chinese: tokens.Dict{}}
	for _, g := range groups {
		head := stem(strings.ToLower(g[0]))
		for _, w := range g[1:] {
			if tokens.IsCJK([]rune(w)[0]) {
				lx.chinese.Add(w, head)
				continue
			}
			if st := stem(strings.ToLower(w)); st != head {
				lx.english[st] = head
			}
		}
	}
	return lx
}
