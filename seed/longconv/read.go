package longconv

import (
	"os"
	"path/filepath"
)

// Formats of the data Open reads.
const (
	FormatCRI    = "cri"
	FormatLoCoMo = "locomo"
)

// Data is what a data directory holds: the conversations, the questions
// that are scored, and what of the dataset was left out of them.
type Data struct {
	Format        string
	Conversations []Conversation
	Questions     []Question
	// LeftOut counts the dataset's questions that are not scored, by why
	// (LoCoMo's adversarial ones have no answer in the conversation).
	LeftOut map[string]int
	// SkippedEvidence counts evidence ids that name no turn of their
	// conversation ("D:11:26"), left out of their question's evidence.
	SkippedEvidence int
}

// Open reads the data in dir: LoCoMo when dir holds locomo10.json
// (scripts/locomo.sh), else the CRI datasets in it or its subdirectories
// (scripts/longconv.sh).
func Open(dir string) (Data, error) {
	if st, err := os.Stat(filepath.Join(dir, locomoFile)); err == nil && !st.IsDir() {
		return readLoCoMo(filepath.Join(dir, locomoFile))
	}
	return readCRIDatasets(dir)
}

// Read is Open's conversations and scored questions.
func Read(dir string) ([]Conversation, []Question, error) {
	d, err := Open(dir)
	if err != nil {
		return nil, nil, err
	}
	return d.Conversations, d.Questions, nil
}
