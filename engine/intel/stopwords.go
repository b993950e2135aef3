package intel

import "strings"

// stopWords are function words, fillers of speech and verbs so common they
// say nothing about a topic. They split keyphrase candidates (as in RAKE) and
// are left out of sentence similarity.
var stopWords = wordSet(`
a about above across after afterwards again against all almost alone along already also although always am among
an and another any anybody anyhow anyone anything anyway anyways anywhere are aren't around as at back be became
because become becomes been before beforehand behind being below beside besides between beyond both but by can
cannot can't could couldn't did didn't do does doesn't doing don't done down during each either else elsewhere
enough especially etc even ever every everybody everyone everything everywhere except few first for former formerly
from further get gets getting got gotten had hadn't has hasn't have haven't having he he'd he'll he's her here
here's hers herself him himself his how however i i'd i'll i'm i've ie if in indeed instead into is isn't it it'd
it'll it's its itself just keep kept last least less let let's like likely made make makes making many may maybe
me meanwhile might mine more moreover most mostly much must my myself namely neither never nevertheless next no
nobody none noone nor not nothing now nowhere of off often oh ok okay on once one ones only onto or other others
otherwise our ours ourselves out over own per perhaps please put quite rather re really said same say says saying
see seem seemed seeming seems seen several shall she she'd she'll she's should shouldn't since so some somebody
somehow someone something sometime sometimes somewhere still such than that that's the their theirs them themselves
then thence there there's thereafter thereby therefore therein thereupon these they they'd they'll they're they've
thing things this those though through throughout thru thus to together too toward towards um uh uhm umm hmm mm
mhm yeah yep yes yup nope hey hi hello bye under until up upon us very via was wasn't we we'd we'll we're we've
well were weren't what what's whatever when whence whenever where where's whereas wherever whether which while
who who's whoever whole whom whose why will with within without won't would wouldn't yet you you'd you'll you're
you've your yours yourself yourselves gonna wanna gotta kind sort lot lots bit actually basically literally right
sure thanks thank know knew think thought go goes going went come comes coming came want wants wanted need needs
take took tell told ask asked call called look looking looked mean means meant try tried trying use used using
new old good great big small little long able around also already today yesterday tomorrow time times day days
year years way ways much many lot something anything everything nothing someone anyone everyone mr mrs ms dr
one two three four five six seven eight nine ten hundred thousand million billion percent per cent
`)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}
