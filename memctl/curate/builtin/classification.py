"""Sentence shapes: which kind of statement a sentence is, as regular expressions.

Each shape names one way people state a durable fact ("I prefer X over Y", "We decided to X
because Y", "Alex is our CTO"); the claim builders in `claims` and `entities` decide what to
write for it. Word lists come from `lexicon` tables, so the patterns stay readable.
"""

from __future__ import annotations

import re

from memctl.core.lazyre import lazy
from memctl.curate.builtin.lexicon import FULL, LO, NAME, ORG, ROLE, UP, alternation, table


def re_(*parts: str, flags: int = 0) -> re.Pattern[str]:
    return lazy("".join(parts), flags, depth=2)


# ---- sentence shapes --------------------------------------------------------------------------

DISCOURSE = re_(
    r"^(?:(?i:No)[,!:]\s+|(?i:OK|Okay|So|Well|Oh|And|But|Also|Wait|Yes|Yeah|Right|Actually|Hmm|",
    r"Now|Anyway|",
    r"Plus|Then|Honestly|Basically|Sorry|Oops|Correction|Ugh|Ha|Wow|Great|Perfect|Cool|Sure|",
    r"Hi|Hey|Hello|Hiya|Morning|By the way|BTW|Btw|FYI|Guess what|Funny enough|Speaking of which)",
    r"\b[,!:]?\s+|(?:Bad|Good|Great) news(?: too)?:\s+|(?:Last|One more) (?:one|thing):\s+|",
    r"[A-Z][a-z]+ (?:problem|question|update|note):\s+)",
)
CORRECTION_CUE = re_(r"^(?:Actually|Sorry|Correction|Oops|Wait|No)\b", flags=re.I)
CORRECTION = re_(
    r"^(?:I meant|it's|it is|that's|that should be|make that)\s+(?P<new>.+?),?\s+",
    r"not\s+(?P<old>[^,.;!]+?)\s*[.!]?$",
    flags=re.I,
)
REL_TIME = re_(
    r"\b(?:(?:this|next|last|coming|previous) (?:week|month|quarter|year|sprint)|today|",
    r"tomorrow|yesterday|tonight|right now|currently|now|ago|so far|these days)\b",
    flags=re.I,
)
OPTIONS = re_(
    rf"\b(?:go with|use|pick|choose|between|deciding between) (?P<a>{ORG}) ",
    rf"(?:or|and|vs\.?) (?P<b>{ORG})",
)
DECISION = re_(
    r"^(?P<who>We|I)(?:'ve| have)? (?P<verb>decided|agreed|chose|settled) (?P<prep>to |on |that )?",
    r"(?P<what>.+?)[.!]?$|",
    r"^(?P<who2>We|I)(?:'re| are|'m| am) going (?:to go )?with (?P<what2>.+?)[.!]?$",
)
INSTRUCTION = re_(
    r"^(?:[Pp]lease )?(?:[Aa]lways|[Nn]ever|[Ff]rom now on|[Gg]oing forward|",
    r"[Ii]n (?:the )?future|[Rr]emember to|[Dd]on't ever|[Dd]o not ever)\b",
)
ORG_OF_USER = re_(
    rf"\bI(?:'m| am) (?:an?|the) [^.!?]*? at (?P<org>{ORG})|\bI work (?:at|for) (?P<org2>{ORG})|",
    rf"\bI (?:run|lead|manage|head|own) [^.!?]*? at (?P<org3>{ORG})",
)
# "I'm Omar, I run ...": a speaker's introduction, then the fact.
INTRO = re_(
    rf"^(?:I(?:'m|’m| am)|[Mm]y name is|[Tt]his is) (?P<name>{NAME})(?:,| and| -|\.)?\s+",
    r"(?P<rest>I\b.+)$",
)
# "I'm Lena, our school ...": an introduction whose next clause is not "I ...".
NAMED_INTRO = re_(
    rf"^(?:I(?:'m|’m| am)|[Mm]y name is) (?P<name>{NAME}),\s+",
    r"(?P<rest>(?:[Mm]y|[Oo]ur)\b.+)$",
)
# An organisation named with what it is to the speaker: "our biggest customer is Northwind".
ORG_MENTION = re_(
    r"\b(?:customers?|clients?|vendors?|partners?|suppliers?|employer|competitors?|",
    rf"investors?|acquirer)(?: is| are|,| called| named)? (?P<org>{ORG})|",
    rf"\b(?:work(?:s|ed)? (?:at|for)|team at|joined|acquired by) (?P<org2>{ORG})",
)
# A place named where someone lives, comes from, moves or travels to: "moved to Berlin".
PLACE = rf"[{UP}][{LO}]+(?:[ -](?:[{UP}][{LO}]+|de|do|da|del|la|le|upon|on))*"
PLACE_MENTION = re_(
    r"\b(?:live[sd]? in|living in|based in|moved to|moving to|relocated to|relocating to|",
    r"grew up in|(?<!switched )(?<!switching )(?<!migrated )(?<!migrating )from|",
    r"visited|visiting|trip to|vacation (?:in|to)|travell?ed to|",
    rf"flew to|went to|back to|born in) (?P<place>{PLACE})\b(?!['’]s)",
)
# A tool or product named as what someone uses or chose: "we switched to Buildkite".
TOOL_MENTION = re_(
    r"\b(?:use[sd]?|using|switched to|switching to|migrat\w* to|adopt\w*|chose|",
    r"picked|go(?:ing)? with|went with|built (?:it )?(?:with|on|in)|written in|runs on|",
    r"moved (?:it |us |them )?(?:to|onto)) ",
    # the whole name or none of it: "Alex's fork" is Alex's, never a tool called "Ale"
    rf"(?P<tool>[{UP}][\w.+#-]*[\w+#](?: [{UP}][\w.+#-]*[\w+#])?)(?![\w.+#-]|['’])",
)
FIRST_PERSON = re_(r"^I(?:'m|'ve|'d|'ll| )")
WE = re_(r"^(?:We(?:'re|'ve|'ll| )|Our )")
ROLE_OF_USER = re_(
    rf"^I(?:'m| am) (?P<art>an?|the) (?P<role>[^,.;!]+?)(?: at (?P<org>{ORG}))?\s*[.!]?$"
)
NOT_A_ROLE = re_(r"\b(?:trying|going|looking|working on|about to)\b")
LOCATION = re_(
    r"^I (?:live|am based|reside|'m based|live and work) in |^I(?:'m| am) based in |",
    rf"^I (?:just |recently )?(?:moved|relocated) to {NAME}",
)
DUTIES = re_(r"^I work (?:at|for|as) |^I (?:own|run|lead|manage|maintain|handle) ")
PREFERENCE = re_(
    r"^I (?:very much |so much |\w+ly |still |also |really )*",
    r"(?:prefer|like|love|hate|dislike|avoid|can't stand) .+$",
)
HABIT = re_(
    r"^I (?:\w+ly )?(?:always|never|usually|typically|generally|normally|tend to|mostly) |",
    r"^I(?:'m| am) on call|",
    r"^I (?:bill|charge|invoice|work) (?:by|per|hourly|daily|remotely|from|async)",
)
WANT = re_(r"^I (?:still )?(?:want|need|'d like|would like) (?:to |a |an |something |some )")
WILL = re_(
    r"^I(?:'ll| will|'m going to) |",
    # "I'm doing an engine swap this weekend": the progressive with a time ahead is a plan.
    r"^I'm \w+ing\b.+\b(?:this (?:week|weekend|month|morning|afternoon|evening)|tomorrow|",
    r"tonight|next (?:week|month|year|\w+day))\b",
)
DID = re_(
    r"^I (?:just )?(?:shipped|fixed|moved|added|deployed|finished|migrated|set up|rotated|",
    r"created|built|merged|released|launched|re-ran|reran|cut|reduced|split|rolled out|",
    r"switched)\b",
)
WE_GOAL = re_(
    r"^We(?:'re| are) (?:trying|aiming|planning|hoping|working) to |",
    r"^We (?:need|want|plan|hope) to ",
)
WE_DID = re_(
    r"^We (?:just |already )?(?:moved|shipped|cut|reduced|migrated|finished|launched|",
    r"rolled out|switched|deployed|added|fixed|built)\b",
)
WE_FACT = re_(
    r"^(?:We(?:'re| are| have|'ve| use| manage| run| keep| own| store| deploy| pay| spend|",
    r" host| build| ship| bill| track)\b|",
    r"Our [\w\s/-]+? (?:is|are|was|were|runs|run|has|have|costs|comes|lives)\b)",
)
PLAN = re_(r"^(?:the )?plan(?: is)?:\s*(?P<what>.+)$", flags=re.I)
OPEN_ITEMS = re_(
    r"^(?:Open items|Open questions|TODO|To do|Still to do|Remaining|Next steps|Follow-ups?):",
    r"\s*(?P<what>.+)$",
    flags=re.I,
)
NEXT = re_(r"^(?:Next|Then|After that),? I (?:still )?(?:need|have|want) to (?P<what>.+)$")
THREAD = re_(r"\bneeds? to (?:\w+ )(?:at |on |into |to )?(?P<obj>[\w ./-]+?)[.(]")
RESOLVED = re_(r"\b(?:back to|parked|done with|finished|fixed|shipped|closed|resolved)\b")
FACT = re_(
    r"^(?P<subj>(?:[Tt]he |[A-Z0-9$][\w$./%-]*)[^,:;]*?) ",
    r"(?P<verb>is|are|was|were|has been|have been|runs|went|goes|comes|come|sits|costs|takes|",
    r"dropped|fell|rose)\b",
)
NOT_A_FACT = re_(r"\b(?:you|your|I|I'm|me|my|would|could|should|might|maybe|if)\b")
PRONOUN_SUBJECT = re_(
    r"\b(?:it|this|that|these|those|they|he|she|there|here|what|which|who)\b", flags=re.I
)
HEARSAY = re_(r"\b(?:says|said|thinks|thought|mentioned|told|heard|asked|reckons)\b")
PROGRESS = re_(
    r"\b(?:went in|went from|went fine|dropped|is down|are down|down to|down from|cut .* by|",
    r"is live|has been live|shipped)\b",
)
GOOD = re_(
    r"^(?:Good (?:catch|call|point|idea)|Perfect|Great|Nice|That worked|That fixed it|",
    r"That did it|This works|It works|Works)\b",
)
BETTER = re_(r"\b(?:sounds|looks|seems) (?:much |a lot |way )?(?:better|good|great|right)\b")
BAD = re_(
    r"\b(?:didn't|did not|doesn't|does not) (?:work|help|fix)\b|",
    r"\btoo (?:long|verbose|slow|complicated)\b|\bthat's wrong\b|\bnot what I\b",
)
# Entities.
IS_OUR_ROLE = re_(
    rf"^(?P<name>{FULL}) is (?P<poss>our|my|their|the) ",
    rf"(?P<role>{ROLE}(?: of (?:the )?[\w-]+(?: [{UP}][\w-]*)*)?)",
    r"(?:,? and (?:he|she|they)(?:'s| is|'re| are) (?P<rest>[^.;!]+))?\s*[.!]?$",
)
MY_ROLE_NAME = re_(
    rf"\b(?P<poss>[Mm]y|[Oo]ur) (?P<role>{ROLE}),? (?P<name>{FULL})",
    r"(?:,? (?P<verb>runs|leads|owns|manages|wants|works (?:at|for|on)|is) (?P<rest>[^.;!]+))?",
)
# A possessive as people type it: "Alex's", "Alex’s", and "James'" for a name ending in s.
POSS = r"(?:['’]s|(?<=s)['’])"
OWNERS_ROLE = re_(
    rf"\b(?P<owner>{FULL})(?P<poss>{POSS}) (?P<role>{ROLE}), (?P<name>{FULL})\b"
)
CALLED = re_(
    rf"^It(?:'s| is) called (?P<name>{ORG})",
    r"(?:,? and it(?:'s| is) (?P<rest>[^.;!]+))?\s*[.!]?$",
)
PERSON_DOES = re_(
    rf"^(?P<name>{FULL}|He|She)(?P<mod> on (?:our|the|my) [\w -]+? team)? ",
    r"(?P<verb>wants|is leading|leads|runs|owns|manages|added|joined|left|is now|",
    r"already added|is)\b(?P<rest>[^.;!]*)",
)
IS_WHAT = re_(r"^ (?:leading|running|on|in charge|responsible|the (?:one|owner|lead))\b")
PERSONS_THING = re_(
    rf"^(?P<name>{FULL})(?P<poss>{POSS}) (?P<what>team|company|startup|product|customers|"
    r"business|clients)",
    rf"(?: (?:in|at) {ORG})? (?:is|are|was|were|has|have|cares?|wants?|needs?)\b",
)
LINK = re_(r"\[\[.*?\]\]")
WORD = re_(r"[A-Za-z][\w-]{2,}")


# ---- facts in conversation --------------------------------------------------------------------
# Long, natural conversations are mostly chatter; these shapes keep what a person says about
# their own life, work, people and plans, and drop the rest before any claim is written.

CHATTER = lazy("^(?:" + "|".join(sorted(table("chatter"))) + ")", re.I)
HYPOTHETICAL = lazy(rf"\b(?:{alternation('hypothetical')})\b", re.I)
WORK = lazy(rf"\b(?:{alternation('work_words')})s?\b", re.I)
RELATION = lazy(rf"\b(?:my|our) (?:\w+ )?(?P<rel>{alternation('relations')})\b", re.I)
EVENT = lazy(rf"\b(?:{alternation('event_verbs')})\b", re.I)
# The speaker as subject, possibly after a short adverbial ("Last weekend I had ...").
SELF_SUBJECT = re_(
    r"^(?:[\w'’,-]+ ){0,4}?(?:I(?:['’](?:m|ve|d|ll))?|My|Me and my)\b(?! mean\b| guess\b| think\b)"
)
GROUP_SUBJECT = re_(r"^(?:[\w'’,-]+ ){0,4}?(?:We(?:['’](?:re|ve|ll))?|Our)\b")
PREFERS = re_(
    r"\bI (?:\w+ly |really |also |still |just )*(?:love|like|enjoy|prefer|adore|hate|dislike|",
    r"can't stand|am (?:really )?into|'m (?:really )?into)\b|\bmy (?:favou?rite|go-to)\b",
    flags=re.I,
)
HABITUAL = re_(
    r"\bI (?:\w+ly )?(?:always|usually|often|never|sometimes|regularly|normally|typically|",
    r"tend to)\b|\bevery (?:day|morning|evening|night|week|weekend|month|year|summer)\b",
    flags=re.I,
)
IDENTITY = re_(
    r"\bI(?:['’]m| am) (?:an?|the) (?!\w+ (?:of|for) you)|\bI work (?:as|at|for|in)\b|",
    r"\bI (?:live|grew up|was born) in\b|\bI(?:['’]m| am) from\b|\bI(?:['’]m| am) (?:\d+|",
    r"single|married|divorced|engaged|pregnant|retired|transgender|trans)\b|",
    r"\bI (?:have|own|got) (?:an?|two|three|\d+) (?:\w+ )?(?:dogs?|cats?|pets?|kids|children|",
    r"sons?|daughters?|car|house|apartment|business|company|shop|store)\b",
    flags=re.I,
)
PLANS = re_(
    r"\bI(?:['’]m| am) (?:going to|gonna|planning|thinking of|about to|getting ready|hoping|",
    r"looking to|working on|saving)\b|\bI(?:['’]ll| will| plan| want| hope| intend| need)\b|",
    r"\b(?:next|this coming) (?:week|month|year|weekend)\b",
    flags=re.I,
)
SELF_ANYWHERE = re_(r"\b(?:I|me|my|myself|mine)\b")
# "Having a good team is so important": a maxim, true of nobody in particular.
MAXIM = re_(
    r"\b(?:is|are|['’]s) (?:so |really |very |super |just |truly )?(?:key|important|essential|",
    r"vital|crucial|everything|the best(?: thing)?|what matters|a must|worth it|the key|",
    r"such an? \w+ way)\b",
    flags=re.I,
)
# Words that stand for something said earlier: a claim built on them says nothing alone.
VAGUE = re_(r"\b(?:it|this|that|those|these|them|here|there|one|stuff|things?)\b", flags=re.I)
FEELING_ONLY = re_(
    r"^I(?:['’]m| am| feel| felt| was) (?:so |really |very |super |totally |just )*",
    r"(?:happy|glad|excited|thrilled|grateful|thankful|proud|sad|sorry|tired|good|great|fine|ok|",
    r"okay|blessed|lucky|stoked|pumped|nervous|amazed|touched)\b[^,;]{0,25}[.!]?$",
    flags=re.I,
)


def conversational_fact(core: str) -> str | None:
    """The kind of fact a sentence states about its speaker, or None for chatter.

    Kinds: identity, relation, preference, habit, plan, event, statement. Questions,
    greetings, thanks, sympathy, compliments, exclamations about the moment, agreement, advice
    and hypotheticals are never facts, whatever words they contain.
    """
    words = core.split()
    if "?" in core or not 4 <= len(words) <= 45:
        return None
    if CHATTER.match(core) or FEELING_ONLY.match(core):
        return None
    if HYPOTHETICAL.search(core):
        return None
    if not (SELF_SUBJECT.match(core) or GROUP_SUBJECT.match(core)):
        # "The rainbow mural is important to me": about the speaker, though not its subject
        return "statement" if SELF_ANYWHERE.search(core) and not MAXIM.search(core) else None
    if IDENTITY.search(core):
        return "identity"
    if PREFERS.search(core):
        return "preference"
    if HABITUAL.search(core):
        return "habit"
    if RELATION.search(core):
        return "relation"
    if PLANS.search(core):
        return "plan"
    if EVENT.search(core):
        return "event"
    return "statement"


_CONTENT = lazy(r"[A-Za-z][\w'’-]{3,}")
_PROPER = lazy(rf"(?<=\s)[{UP}][\w'’-]+")
_DATED = lazy(r"\b(?:\d{4}|\d+|on \d{4}-\d\d-\d\d)\b")
MIN_FACT_WEIGHT = 3.5
_KIND_WEIGHT = {
    "identity": 3.0,
    "relation": 2.0,
    "preference": 2.0,
    "habit": 2.0,
    "plan": 1.5,
    "event": 2.0,
    "statement": 0.0,
}


def fact_weight(core: str, kind: str) -> float:
    """How much a sentence tells: its content words, names and numbers, and its kind of fact.

    Used to pick the one or two sentences of a turn worth a claim; "I went to a support group
    yesterday" outweighs "It was so powerful" in the same turn.
    """
    content = len(_CONTENT.findall(core))
    names = len(_PROPER.findall(core))
    vague = len(VAGUE.findall(core)) if content < 6 else 0
    return (
        min(content, 8) * 0.5
        + min(names, 2)
        + bool(_DATED.search(core))
        + _KIND_WEIGHT[kind]
        - vague
        - ("!" in core)  # exclaimed: more often about the moment than a lasting fact
        - (kind == "statement" and not SELF_SUBJECT.match(core))  # the speaker is not the subject
    )


def is_chatter(core: str) -> bool:
    """Greetings, thanks, compliments and the like: never a claim, in any store."""
    return bool(CHATTER.match(core) or FEELING_ONLY.match(core))


# A statement of fact about a system names something specific: a number, a product, a token.
TECHNICAL = lazy(rf"\d|(?<=\s)[{UP}][\w-]+|\b\w+[_*./]\w*|\b[A-Z0-9]{{2,}}\b")
# "so gorgeous", "really special": how the moment felt, not what is the case.
EMOTIVE = lazy(
    r"\b(?:so|such|really|super|truly|absolutely|incredibly) (?:a |an )?(?:\w+ly )?"
    r"(?:gorgeous|beautiful|amazing|awesome|cool|cute|lovely|nice|great|special|inspiring|"
    r"fun|powerful|good|bad|sad|happy|proud|wonderful|fantastic|incredible|important)\b",
    re.I,
)
