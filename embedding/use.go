package embedding

import (
	"context"
	"os"
	"path/filepath"

	"mneme/embedding/usem"
)

// USEModel is the name memories embedded by USE record.
const USEModel = usem.Name

// USEDimension is the size of USE's vectors.
const USEDimension = usem.Dimension

// USE is Google's Universal Sentence Encoder multilingual v3 run in-process
// (package usem): a real sentence model for Chinese, English and fourteen
// other languages, that places a question near its paraphrases and
// translations. It embeds questions and stored texts alike. It is safe for
// concurrent use.
type USE struct{ m *usem.Model }

// DefaultModelDir is where scripts/model.sh puts models unless
// MNEME_MODEL_DIR says otherwise: the user's cache directory.
func DefaultModelDir() string {
	if dir := os.Getenv("MNEME_MODEL_DIR"); dir != "" {
		return dir
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return filepath.Join(".cache", "mneme", "models")
	}
	return filepath.Join(cache, "mneme", "models")
}

// LoadUSE loads the model from dir, the directory that holds every model
// (use-multilingual-v3/ inside it); "" means DefaultModelDir. Loading takes
// about a second and 100 MB.
func LoadUSE(dir string) (*USE, error) {
	if dir == "" {
		dir = DefaultModelDir()
	}
	m, err := usem.Load(filepath.Join(dir, usem.Name))
	if err != nil {
		return nil, err
	}
	return &USE{m: m}, nil
}

// Dimension returns USEDimension.
func (u *USE) Dimension() int { return usem.Dimension }

// Model returns USEModel.
func (u *USE) Model() string { return usem.Name }

// Embed returns one unit vector per text.
func (u *USE) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return u.m.Embed(texts), nil
}

// EmbedQuery returns the vector of one question.
func (u *USE) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	vecs, err := u.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}
