package knowledge

import "testing"

// hiddenByStyle reports an inline style that hides what it styles and all
// it holds, or its text, as look reads it.
func hiddenByStyle(style string) bool {
	decl := declarations(style)
	return hidesAll(decl) || textStyle{}.with(decl).hidden()
}

// Inline styles as pages hide text with them, spelled every way a browser
// accepts, and styles that leave the text in sight.
func TestHiddenByStyle(t *testing.T) {
	tests := []struct {
		style string
		want  bool
	}{
		{"display:none", true},
		{"DISPLAY: None !important", true},
		{"display:/**/none", true},
		{`d\isplay:none`, true},
		{`display:\6e one`, true},
		{"visibility:/* x */hidden", true},
		{"visibility:collapse", true},
		{"opacity:0", true}, {"opacity:0.0", true}, {"opacity:.0", true}, {"opacity:0%", true}, {"opacity:-1", true},
		{"opacity:0e0", true}, {"opacity:0!important", true},
		{"font-size:0", true}, {"font-size:0em", true}, {"font-size:0rem", true}, {"font-size:0pt", true}, {"font-size:0.0px", true},
		{"font-size:0%", true}, {"font:0/0 a", true}, {"font: italic 0px serif", true},
		{"color:transparent", true}, {"color:rgba(0,0,0,0)", true}, {"color: rgb(0 0 0 / 0%)", true},
		{"text-indent:-9999px", true},
		{"position:absolute;left:-10000px", true}, {"position:fixed; top:-999em", true},
		{"position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0,0,0,0)", true},
		{"clip-path:inset(50%)", true},
		{"height:0;overflow:hidden", true},
		{"transform:scale(0)", true},
		{"display:none !important; display:block", true},
		{"content-visibility:hidden", true}, {"clip-path:inset(100%)", true}, {"filter:opacity(0)", true}, {"scale:0", true},
		{"transform:translateX(-9999px)", true}, {"transform: translate(-100vw, 0)", true}, {"margin-left:-10000px", true},
		{"opacity:0.01", true}, {"font-size:0.5px", true}, {"font-size:0.05em", true},
		// In sight.
		{"display:none;display:block", false},
		{"opacity:0.5", false}, {"font-size:12px", false}, {"font:12px/1.4 serif", false},
		{"color:#333", false}, {"color:rgba(0,0,0,0.8)", false}, {"color:rgb(0,0,0)", false}, {"color:rgb(0 0 0)", false}, {"color:#0000", true},
		{"text-indent:2em", false}, {"position:absolute;left:10px", false}, {"position:relative;left:-10000px", false},
		{"width:1px", false}, {"overflow:hidden;width:300px", false}, {"transform:scale(1.2)", false},
		{"opacity:0.9", false}, {"font-size:0.9em", false}, {"position:absolute;left:0", false}, {"transform:translateX(-10px)", false},
		{"clip-path:inset(10%)", false}, {"filter:blur(1px)", false},
		{"", false}, {"garbage;;:;", false},
	}
	for _, tt := range tests {
		if got := hiddenByStyle(tt.style); got != tt.want {
			t.Errorf("hiddenByStyle(%q) = %v, want %v", tt.style, got, tt.want)
		}
	}
}
