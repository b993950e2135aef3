package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/earshot-app/earshot/bench/intelbench"
	"github.com/earshot-app/earshot/engine/intel"
)

// benchCache is where the pinned outside data sets are kept between runs.
func benchCache() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "earshot-bench"), nil
}

// intelTable measures the engine's summaries against Reuters journalists'
// headlines and its sentiment against people's labels of review sentences.
func intelTable(ctx context.Context) error {
	cache, err := benchCache()
	if err != nil {
		return err
	}
	stories, err := reutersStories(ctx, cache)
	if err != nil {
		return err
	}
	engineSum := func(ctx context.Context, text string) (string, error) {
		res, err := intel.Analyze(ctx, text, intel.Options{Summarize: true})
		if err != nil {
			return "", err
		}
		return res.Summary, nil
	}
	systems := []struct {
		name string
		sum  intelbench.Summarizer
	}{
		{"engine (" + intel.SummaryModel + ")", engineSum},
		{"lead-3", intelbench.LeadSummarizer(3)},
		{"lead, as many sentences as the engine's", func(ctx context.Context, text string) (string, error) {
			sum, err := engineSum(ctx, text)
			return intelbench.Lead(text, len(intelbench.Sentences(sum))), err
		}},
		{"lead-1", intelbench.LeadSummarizer(1)},
	}
	fmt.Printf("### Summaries against Reuters headlines\n\n")
	fmt.Printf("%d Reuters-21578 stories (Debian `%s` %s); reference: the story's headline. ROUGE with Porter stemming, macro-averaged.\n\n",
		len(stories), intelbench.TmDeb.Name, intelbench.TmDeb.Version)
	fmt.Println("| summary | stories | mean tokens | ROUGE-1 F | ROUGE-1 R | ROUGE-1 P | ROUGE-L F | ROUGE-L R |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, s := range systems {
		sc, err := intelbench.EvalSummaries(ctx, stories, s.sum, true)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		fmt.Printf("| %s | %d | %.1f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", s.name, sc.Docs, sc.MeanWords,
			sc.Rouge1.F1, sc.Rouge1.Recall, sc.Rouge1.Precision, sc.RougeL.F1, sc.RougeL.Recall)
	}
	fmt.Println()

	files, err := intelbench.ReadNPM(ctx, cache, intelbench.SentimentNPM, slices.Sorted(maps.Values(intelbench.SentimentFiles)))
	if err != nil {
		return err
	}
	classify := func(ctx context.Context, text string) (string, float64, error) {
		res, err := intel.Analyze(ctx, text, intel.Options{Sentiment: true})
		if err != nil {
			return "", 0, err
		}
		return res.Average.Sentiment, res.Average.Score, nil
	}
	fmt.Printf("### Sentiment against people's labels\n\n")
	fmt.Printf("UCI Sentiment Labelled Sentences (npm `%s@%s` fixtures); each sentence labelled positive or negative by people.\n\n",
		intelbench.SentimentNPM.Name, intelbench.SentimentNPM.Version)
	fmt.Println("| source | sentences | majority class | engine accuracy | engine neutral | accuracy when not neutral | score sign right |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
	var all intelbench.SentimentScores
	for _, src := range slices.Sorted(maps.Keys(intelbench.SentimentFiles)) {
		items, err := intelbench.ParseLabelled(bytes.NewReader(files[intelbench.SentimentFiles[src]]))
		if err != nil {
			return fmt.Errorf("%s: %w", src, err)
		}
		sc, err := intelbench.EvalSentiment(ctx, items, classify)
		if err != nil {
			return fmt.Errorf("%s: %w", src, err)
		}
		printSentiment(src, sc)
		all = all.Add(sc)
	}
	printSentiment("**all**", all)
	fmt.Println()
	return nil
}

func printSentiment(name string, s intelbench.SentimentScores) {
	fmt.Printf("| %s | %d | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% |\n", name, s.Sentences, 100*s.Majority(),
		100*s.Accuracy(), 100*float64(s.Neutral)/float64(max(s.Sentences, 1)), 100*s.PolarAccuracy(), 100*s.SignAccuracy())
}

// reutersStories reads the Reuters stories of the pinned Debian package,
// in file order, each story once.
func reutersStories(ctx context.Context, cache string) ([]intelbench.Article, error) {
	files, err := intelbench.ReadDeb(ctx, cache, intelbench.TmDeb, intelbench.IsReutersFile)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []intelbench.Article
	for _, name := range slices.Sorted(maps.Keys(files)) {
		arts, err := intelbench.ParseReuters(bytes.NewReader(files[name]))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for _, a := range arts {
			if !seen[a.ID] {
				seen[a.ID] = true
				out = append(out, a)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no Reuters stories in %s %s", intelbench.TmDeb.Name, intelbench.TmDeb.Version)
	}
	return out, nil
}
