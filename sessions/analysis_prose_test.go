package sessions_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Vocabulary of the made-up reports longDocument writes: sentences are
// drawn from these, so that no two paragraphs are alike and the text has
// the sentiments, topics and requests text analysis looks for.
var (
	proseSubjects = strings.Fields(`the committee the council the survey team our customers the new manager
		the engineers the nurses the farmers the travellers the students the accountants the harbour authority
		the library staff the volunteers the orchestra the delivery drivers the bakery the research group`)
	proseVerbs = []string{"reviewed", "questioned", "welcomed", "criticised", "postponed", "celebrated",
		"measured", "rebuilt", "ignored", "praised", "doubled", "explained", "rejected", "funded", "described"}
	proseObjects = []string{"the budget for the coming winter", "the flooded road near the river", "the late invoices",
		"a plan to open the museum on Sundays", "the broken heating in the school", "the price of fresh bread",
		"the timetable of the morning trains", "a proposal for a cycle lane", "the waiting list at the clinic",
		"the noise from the night market", "the harvest after a dry summer", "the software update on the tills",
		"the rent of the community hall", "the recycling of glass bottles", "a festival of local music"}
	proseGood = []string{"It was a wonderful result and everyone was delighted.", "People were grateful and the mood was warm.",
		"The outcome was excellent, better than anyone had hoped.", "Several residents said they loved the change.",
		"The team felt proud, happy and relieved."}
	proseBad = []string{"It was a terrible mistake and many people were angry.", "Residents were furious about the delay.",
		"The result was awful, a frustrating waste of money.", "Some said it was the worst decision in years.",
		"The staff felt ignored, tired and upset."}
	proseFlat = []string{"The figures were published on Tuesday.", "A second meeting is planned for the spring.",
		"The report runs to forty pages.", "Copies are kept at the town hall.", "The minutes were approved without comment."}
	proseAsks = []string{"I would like to cancel my subscription before the next bill.", "Please refund the second charge on my account.",
		"Could you update my address for the invoices?", "We need to book a room for the next meeting.",
		"Can someone check the meter readings again?"}
	proseNumbers = strings.Fields(`two three four five six seven eight nine ten twelve fifteen twenty thirty forty`)
	proseTowns   = strings.Fields(`Ashford Brampton Calder Dunmore Eastleigh Fenwick Glenrock Harlow Inverby Jesmond Kelso Lowther`)
)

// longDocument writes about words words of varied English prose, the
// same for the same seed: chapters with headings, paragraphs of four to
// nine sentences, each sentence drawn from the vocabulary above.
func longDocument(words int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	var b strings.Builder
	n, chapter := 0, 0
	for n < words {
		if chapter == 0 || r.IntN(12) == 0 {
			chapter++
			h := fmt.Sprintf("Chapter %d: %s and %s", chapter, pick(proseTowns), pick(proseObjects))
			b.WriteString(h + "\n\n")
			n += len(strings.Fields(h))
		}
		sentences := 4 + r.IntN(6)
		for i := range sentences {
			var s string
			switch k := r.IntN(10); {
			case k < 4:
				s = fmt.Sprintf("In %s, %s %s %s %s days ago.", pick(proseTowns), pick(proseSubjects), pick(proseVerbs), pick(proseObjects), pick(proseNumbers))
				s = strings.ToUpper(s[:1]) + s[1:]
			case k < 6:
				s = pick(proseGood)
			case k < 8:
				s = pick(proseBad)
			case k < 9:
				s = pick(proseFlat)
			default:
				s = fmt.Sprintf("%q, wrote one of %s.", pick(proseAsks), pick(proseSubjects))
			}
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(s)
			n += len(strings.Fields(s))
		}
		b.WriteString("\n\n")
	}
	return strings.TrimSpace(b.String())
}
