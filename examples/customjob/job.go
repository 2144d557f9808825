package main

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/flowstate/flowstate/runtime/connectors"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/state"
)

// Play is one game a player played: an input line "player game score".
type Play struct {
	Player, Game string
	Score        int64
}

// parsePlay reads "player game score"; blank lines, comments (#) and malformed lines
// yield ok == false.
func parsePlay(line string) (p Play, ok bool) {
	f := strings.Fields(line)
	if len(f) != 3 || strings.HasPrefix(f[0], "#") {
		return Play{}, false
	}
	score, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		return Play{}, false
	}
	return Play{Player: f[0], Game: f[1], Score: score}, true
}

// Leaderboard builds the job: for every play it writes the player's running summary,
//
//	player<TAB>plays=P<TAB>games=G<TAB>top=S1,S2,...
//
// with P the player's plays so far, G the distinct games played, and the player's best n
// scores, highest first. Per player it keeps a MapState (plays per game) and a ListState
// (the best n scores), both in the configured state backend.
func Leaderboard(name, input, output string, n, parallelism int) (*dataflow.Job, error) {
	if n < 1 {
		return nil, fmt.Errorf("top %d: must be at least 1", n)
	}
	job := dataflow.NewJob(name)
	job.Parallelism = parallelism
	lines := dataflow.FromSource[string](job, "plays", connectors.TextFiles{Path: input})
	plays := dataflow.FlatMap(lines, func(line string, emit func(Play)) {
		if p, ok := parsePlay(line); ok {
			emit(p)
		}
	})
	games := state.NewMap("games", state.String, state.Int64)
	top := state.NewList("top", state.Int64)
	byPlayer := dataflow.KeyBy(plays, func(p Play) []byte { return []byte(p.Player) })
	summaries := dataflow.Process(byPlayer, "leaderboard", []state.Descriptor{games, top},
		func(kc *dataflow.KeyedContext, p Play, emit func(string)) error {
			st := kc.State()
			played, _, err := games.Get(st, p.Game)
			if err != nil {
				return fmt.Errorf("player %q: games: %w", p.Player, err)
			}
			if err := games.Put(st, p.Game, played+1); err != nil {
				return fmt.Errorf("player %q: games: %w", p.Player, err)
			}
			all, err := games.Entries(st)
			if err != nil {
				return fmt.Errorf("player %q: games: %w", p.Player, err)
			}
			best, err := top.Get(st)
			if err != nil {
				return fmt.Errorf("player %q: top: %w", p.Player, err)
			}
			best = insertTop(best, p.Score, n)
			if err := top.Update(st, best); err != nil {
				return fmt.Errorf("player %q: top: %w", p.Player, err)
			}
			emit(summary(p.Player, all, best))
			return nil
		})
	dataflow.SinkTo(summaries, connectors.FileSink{Dir: output})
	return job, job.Validate()
}

// insertTop adds score to best (highest first) and keeps the n highest.
func insertTop(best []int64, score int64, n int) []int64 {
	i, _ := slices.BinarySearchFunc(best, score, func(a, b int64) int { return cmp.Compare(b, a) })
	best = slices.Insert(best, i, score)
	return best[:min(len(best), n)]
}

// summary formats a player's line.
func summary(player string, games map[string]int64, best []int64) string {
	var plays int64
	for _, c := range games {
		plays += c
	}
	scores := make([]string, len(best))
	for i, s := range best {
		scores[i] = strconv.FormatInt(s, 10)
	}
	return fmt.Sprintf("%s\tplays=%d\tgames=%d\ttop=%s", player, plays, len(games), strings.Join(scores, ","))
}
