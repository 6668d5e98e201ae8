"""Word lists behind the NLP extractor's rules; data only, each list says what it decides.

English words are compared as written (capitalized) unless the list says lowercase.
"""

from __future__ import annotations

import re


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


PERSON = "person"
ORGANIZATION = "organization"
LOCATION = "location"
PRODUCT = "product"
EVENT = "event"
CONCEPT = "concept"

TYPE_PRIORITY = (PERSON, ORGANIZATION, PRODUCT, EVENT, LOCATION)
"""When a chunk gives one name several kinds of evidence, the first in this order wins;
a name without evidence is a concept."""

MONTHS = _words(
    "January February March April May June July August September October November December "
    "Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec"
)
BEFORE_A_DATE = _words(
    """in on by since until till during of from last next early late mid between through
    before after this that each every"""
)
"""Words before a month that make it one ("in March", "since June"), not a given name."""
FIELD_LABELS = _words("Starring Website Genre Founders Founded Released Dissolved")
"""Labels of an infobox's fields, in a passage that runs its table into one line ("Gart
Sports Founded 1928 Headquarters Houston", "Starring David Oyelowo"): never a name's word."""
BREAKS = (
    MONTHS
    | FIELD_LABELS
    | _words(
        """Monday Tuesday Wednesday Thursday Friday Saturday Sunday
        EUR USD GBP NOK SEK DKK CHF JPY CNY RMB CAD AUD I"""
    )
)
"""Capitalized tokens that are never part of a name (a date or an amount follows them, or
they label a field)."""

TITLES = _words(
    """Mr Mrs Ms Mx Dr Prof Professor Sir Dame Lord Lady President Chairman Chairwoman Chief
    Vice Senator Minister Director Captain Judge General Colonel Doctor Rev Father Sister King
    Queen Prince Princess Dean Mayor Governor Chancellor Ambassador Admiral Lieutenant
    Sergeant Commander Commandant Marshal Consul Regent Viceroy Emperor Empress Tsar Sultan
    Caliph Emir Sheikh Sheikha Pope Cardinal Archbishop Bishop Abbot Vicar"""
)
"""Stripped from the front of a name; what remains of the name is then a person. Alone, a
title names nothing ("served as Regent", "an Italian Cardinal")."""
NOBLE_TITLES = _words(
    """Duke Duchess Archduke Archduchess Count Countess Earl Baron Baroness Marquess Marquis
    Marchioness Viscount Viscountess Margrave Margravine Landgrave Landgravine Elector Electress
    Czar Czarina Tsarina Dauphin Infante Infanta Maharaja Maharani"""
)
"""Ranks of nobility: alone they name nothing ("an Archduke and Prince of Tuscany"), but
before a name they stay in it, as they often are the name's own word ("Duke Ellington",
"Count Basie", "Earl Grey")."""
ROYAL_TITLES = NOBLE_TITLES | _words("King Queen Prince Princess Emperor Empress Tsar")
"""Titles of a person named by where they reign or were born: "Princess Ileana of Romania",
"Archduke Anton of Austria" is one name, unlike "Mayor Smith of London"."""
TITLE_AFTER = _words("Consort Dowager Mother Regnant Royal Hereditary Palatine Regent")
"""Words that make a title of a royal title before them ("Queen Consort of Hungary", "Count
Palatine of Simmern", "Prince Hereditary of Sulzbach"): a title of a place, no person."""
TITLE_QUALIFIERS = _words("Prime Deputy Acting Foreign")
"""Words that make a title of a title ("Prime Minister", "Deputy Prime Minister", "Acting
President", "Foreign Minister"): stripped with it before a person's name, nothing alone."""
GENITIVE_KINDS = _words(
    """People Women Men Children Woman Man Girls Boys Ladies Gentlemen Workers Farmers Soldiers
    Veterans Citizens King Queen Prince Princess Lord Lady"""
)
"""Possessors that make a kind of thing of a name rather than say whose it is ("People's
Republic of China", "Women's Tennis Association", "King's College": nlp_possessive)."""
SAINTS = _words("St St. Saint")
OCCUPATIONS = _words(
    """Actor Actress Arranger Author Bassist Cellist Choreographer Cinematographer Composer
    Conductor Dancer Draughtsman Drummer Engineer Evangelist Grandmaster Guitarist Illustrator
    Journalist Lyricist Missionary Musician Novelist Painter Photographer Pianist Playwright
    Poet Preacher Producer Screenwriter Sculptor Singer Songwriter Violinist"""
)
"""What a person does, capitalized in a list of roles ("Music Producer, Songwriter and
Arranger", "a Welsh minister and Evangelist"): alone, or after a nationality, it names
nothing. A title in quotation marks ("The Evangelist") is read whole elsewhere (nlp_titles)."""
BIRTH_MARKERS = _words("Née Né")
"""Before the name someone was born with ("Princess Dibyasambanna (Née ...)"): no name."""
HONORIFICS = _words("Mr Mrs Ms Mx Dr Prof Professor Sir Dame Lord Lady Doctor Rev Father Sister")
"""Titles that only ever stand before a person's name. The others (offices and ranks) also
open the names of companies and things: "General Motors", "Prince Aviation"."""
ABBREVIATED_TITLES = _words("Mr Mrs Ms Mx Dr Prof Rev St Gen Col Capt Sen Gov")
"""Titles written with a period ("Dr. Chen"): the period neither ends the sentence nor the name."""

SENTENCE_ABBREVIATIONS = ABBREVIATED_TITLES | _words(
    "Jr Sr Inc Ltd Co Corp No vs etc e.g i.e Fig approx Dept Univ Mt Ph.D"
)
"""A period after these does not end a sentence."""
INITIALS = re.compile(r"^[A-Z](?:\.[A-Z])*$")
"""One initial or dotted initials ("T", "J.R.R"): a period after it ends neither the sentence
nor the name ("George T. Solomon", "J.R.R. Tolkien")."""

NAME_PARTICLES = _words(
    "of van von de der den des da das dos di du del della la le los las el en como zu ter bin"
    " bint ibn mac"
)
"""Lowercase words allowed inside a name ("Institute of Ocean Sensing", "Ludwig van ...",
"Zayed bin Sultan", "Conchobar mac Nessa", "Medina de las Torres"); up to three in a row
("van der", "de la", "Así en el Barrio como en el Cielo"). Not Spanish "y": it joins a
person's two surnames ("Fulgencio Batista y Zaldívar") as often as two people or two
papers, and the person's name then goes untyped where the model reads "Fulgencio Batista"."""
PATRONYMICS = _words("bin bint ibn mac")
"""Particles that say "son of" or "daughter of": a name with one inside is a person's."""

DEMONYMS = _words(
    """Norwegian Chinese English Scottish British European Asian American Canadian German French
    Japanese Korean Indian Russian Spanish Italian Dutch Swedish Danish Finnish Polish Irish
    Australian African Arabic Latin Nordic Scandinavian Western Eastern Northern Southern"""
)
"""Adjectives of origin: capitalized, but not entities on their own."""
ORIGINS = DEMONYMS | _words("US U.S USA U.S.A UK U.K EU")
"""Words of origin that may stand before a title: "U.S. President Theodore Roosevelt"."""
EPITHETS = _words("Elder Younger Great Good Bold Bald Pious Fat Wise Confessor Conqueror")
"""Epithets after a name and "the": "Pieter Bruegel the Elder", "Philip the Bold"."""
POSTNOMINALS = _words("CBE OBE MBE KBE GBE DBE FRS FRSE QC KC VC")
"""Honours written after a person's name, not part of it ("Archibald Gordon CBE")."""
DEGREES = _words(
    """B.A M.A Ph.D D.Phil D.Ph J.D D.D M.D B.S M.S B.Sc M.Sc LL.B LL.M LL.D M.B.A M.Phil
    B.Ed M.Ed B.Com M.Com B.Tech M.Tech"""
)
"""Academic degrees as written with their periods (the last one cut off, as a name's end):
"received his B.A. from Yale" names Yale, not a "B.A" that every graduate's passage shares."""
CERTIFICATIONS = _words("Gold Platinum Silver Diamond Multi-Platinum")
"""Sales awards of a record after "certified" or "went" ("certified Platinum by the RIAA",
"went Gold"): no name."""

ORG_SUFFIXES = _words(
    """Inc Corp Corporation Co Company Ltd Limited LLC LLP PLC plc GmbH AG SA AS ASA AB NV BV Oy
    Group Holdings Partners Capital Ventures Invest Investments Fund Bank Foundation Trust
    Association Society Council Committee Commission Agency Authority Ministry Department
    Institute University College Academy School Schools Lab Labs Laboratory Laboratories Hospital
    Clinic Polymers Chemicals Pharmaceuticals Therapeutics Biosciences Robotics Aquatics Dynamics
    Aerospace Motors Airlines Airways Energy Electronics Semiconductors Networks Software Systems
    Technologies Solutions Industries Logistics Shipping Equipment Media Studios Press Insurance
    Securities Consulting Services Enterprises Federation Union Party Office Bureau Church Museum
    Library Center Centre FC F.C AFC A.F.C S.C C.F Organization Organisation Orchestra Gallery
    Galleries"""
)
"""Last words of organization names."""
MEDIA_SUFFIXES = _words(
    "Pictures Productions Films Entertainment Records Broadcasting Publishers Publishing"
)
"""Last words of studios', labels' and publishers' names: an organization's, but weaker than
ORG_SUFFIXES, since a field can end so too ("Zagreb School of Animated Films" stays one
name, where "Lab of Northmere University" is two)."""
DIGNITIES = _words(
    "Barony Baronetcy Viscountcy Earldom Marquessate Dukedom Peerage Lordship Headship"
)
"""Ranks held, not people or places: "succeeded to the Barony", "the Earldom of Morton"."""
OF_HEADS = DIGNITIES | _words(
    """Institute University College Academy School Bank Ministry Department Society Museum Council
    Board Office Bureau Church Federation Republic Kingdom Commonwealth Union Association Chamber
    Court House Order Centre Center Gulf Bay Isle Sea Cape Strait City Port Lake Journal Battle
    Siege Treaty Duchy County Province Diocese Archdiocese Principality Emirate Sultanate Register
    Registry Assembly Parliament"""
)
"""Words that take an "of" inside a name: "University of Bergen", "Gulf of Mexico",
"Journal of Small Business Management", "Battle of the Somme"."""
FOR_HEADS = _words(
    """Award Awards Prize Medal Cross Trophy Order Center Centre Institute Society Commission
    Committee Council Congregation Organisation Organization Association Forum Party Academy
    Office Board Tribunal Endowment Partnership Foundation Fund Campaign Movement Alliance
    Coalition Front Union Agency Ministry Department School College Museum Network Initiative
    Conference Federation"""
)
"""Words that take a "for" inside a name: "Center for Wooden Boats", "National Endowment for
the Arts", "Academy Award for Best Actor", "Medal for Gallantry". Not "League": a player
makes appearances "in the Football League for Tranmere Rovers"."""
EVENT_PREFIXES = _words("Project Operation Programme Program")
EVENT_SUFFIXES = _words(
    """Forum Conference Summit Congress Symposium Festival Expo Exhibition Fair Workshop Olympics
    Games Cup Championship Championships War Election Meeting Week Battle Battles Siege
    Revolution Rebellion Uprising Massacre Crisis Tournament Marathon Olympiad Revolt Crusade
    Crusades Riot Riots Coup Invasion Mutiny Insurrection Earthquake Famine Pandemic Epidemic"""
)
"""A name's head that makes it an event: its last word, or the word before its "of"
("Battle of Hastings", "Siege of Cassel", "French Revolution", "Cuban Missile Crisis")."""
EVENTS_ALONE = _words("Olympics Paralympics")
"""Event heads that name one event alone ("competed at the Olympics", "the 1936 Olympics"),
unlike "the Conference" or "the War"."""
AWARD_HEADS = _words("Award Awards Prize Prizes Medal Medals Trophy Act")
"""An honour's name ("Academy Award for Best Actor", "Medal for Gallantry") or a law's
("California Global Warming Solutions Act") is a concept, whatever the
named-entity model reads in it (organization, work of art, law)."""
LOCATION_SUFFIXES = _words(
    """Sea Ocean Island Islands Isle Fjord Bay River Lake Coast Mountain Mountains Peninsula
    Strait Gulf Valley County Province Street Road Avenue Harbour Harbor Port Canal Desert Cape
    Forest Park Region District City Airport Airfield Aerodrome Stadium Glacier Peak Creek Canyon
    Reef Falls Wilderness Volcano Plateau Lagoon Reservoir Archipelago Atoll Township Prefecture
    Oblast Krai Governorate Highway Motorway Expressway Freeway Parkway Turnpike"""
)
PLACE_OF_HEADS = _words("Town Village Borough Municipality")
"""Words that make a place of the name after their "of" ("Town of Westcliffe"); last, they
end a football club's name too ("Luton Town")."""
LOCATION_PREFIXES = _words("Lake Mount Mt Cape Isle Fort Port")
"""Words that open a place's name of two words ("Mount Everest", "Cape Cod", "Lake Michigan");
not "River", a given name too ("River Phoenix")."""
DIRECTIONS = _words(
    """North South East West Northeast Northwest Southeast Southwest Northeastern Northwestern
    Southeastern Southwestern Midwestern Downtown"""
)
GROUP_QUALIFIERS = (DIRECTIONS - {"Downtown"}) | _words(
    "Northern Southern Eastern Western Central Native Latin New"
)
"""Words that qualify a nationality or a faith ("South Korean", "Native American", "Latin
American", "New Mexican"). "Old", "Middle", "High" and "Modern" are not among them: with a
nationality they name a language ("Middle English", "High German")."""
GROUP_WORDS = _words(
    """Muslim Muslims Jew Jews Jewry Protestant Protestants Catholic Catholics Orthodox Hindu
    Hindus Sikh Sikhs Shia Sunni Jesuit Jesuits Mormon Mormons Quaker Quakers Celtic Hispanic
    Hispanics Arabic Dutch French Welsh Swiss Greek Greeks Thai Czech Czechs Basque Basques
    Arab Arabs Turk Turks Kurd Kurds Serb Serbs Croat Croats Slav Slavs Scot Scots Pole Poles
    Dane Danes Swede Swedes Finn Finns"""
)
"""Words of a faith or a people that the shape of a nationality does not cover (-ic words:
"Republic" and "Pacific" have that shape too)."""
HEAD_WORDS = ORG_SUFFIXES | LOCATION_SUFFIXES | EVENT_SUFFIXES | OF_HEADS | DIRECTIONS
"""Words that end or head a name but name nothing alone ("Center", "City", "Meeting",
"Northeast"): a one-word name among them is the rest of a longer name or a common word."""

PERSON_BEFORE = _words(
    """said says engineer researcher officer executive director founder co-founder manager
    professor partner president chairman chairwoman chair minister scientist analyst student
    author authors spokesperson ceo cto cfo secretary colleague lead"""
)
"""Lowercase word right before a name that marks a person ("principal engineer Mira Okafor")."""
PERSON_ROLES = (
    "engineer|researcher|officer|executive|director|founder|co-founder|manager|professor|"
    "partner|president|chair|chairman|chairwoman|head|ceo|cto|cfo|coo|minister|scientist|"
    "analyst|student|author|architect|designer|developer|consultant|adviser|advisor|secretary|"
    "spokesperson|journalist|reporter|lawyer"
)
"""Roles after a name and a comma ("Lena Voss, vice president of quality")."""
PERSON_AGENT_VERBS = (
    "led|headed|directed|chaired|written|authored|founded|reported|signed|presented|supervised|"
    "co-written|co-directed|composed|edited|illustrated|narrated|sung|"
    "painted|sculpted|translated|coached|lyrics|music|screenplay|libretto"
)
"""Passive verbs, and the parts of a work, whose "by" introduces a person ("the team led by
Mira Okafor", "with lyrics by Ira Gershwin")."""
PERSON_PRONOUNS = _words("He She His Her")
"""A sentence starting with one of these continues about the person the previous one began with."""
SUBJECT_PRONOUNS = PERSON_PRONOUNS | _words("It Its")
"""Sentence openers that refer back to the chunk's subject."""
ORG_BEFORE = _words(
    """company firm operator manufacturer maker supplier subsidiary startup fund insurer
    distributor contractor founded acquire acquired acquiring"""
)
ORG_ROLES = (
    "company|firm|maker|manufacturer|supplier|operator|startup|subsidiary|group|fund|institute|"
    "university|agency|lab|laboratory|utility|insurer|bank|distributor|contractor|consultancy|"
    "retailer|publisher|broadcaster|carrier"
)
ORG_VERBS_AFTER = "employs|was founded|were founded|has raised|raised|announced|agreed to acquire"
LOCATION_BEFORE = _words("in near")
PHRASE_ENDERS = _words(
    "in on at and or to for with since from by until during where which who that is was has had"
)
"""Words that may follow a place name after "in" ("in Bergen in 2014", "in Ningbo, China")."""

CLAUSE_OPENERS = _words(
    """officially originally currently formerly previously initially eventually finally
    subsequently additionally ironically nominally historically traditionally reportedly
    allegedly apparently notably meanwhile however moreover furthermore nevertheless
    consequently thereafter ultimately although though unlike unless whereas whilst"""
)
"""Adverbs that comment on a sentence and conjunctions that open a clause: never a name's
first word. "Officially the Blue Mountains", "Currently Sushma Berlia", "Although Yoritada"
and "Unlike Calcutta" were read so from a sentence's first words, and '"Although Nizar was'
from a quotation's."""
EXTRA_STOPWORDS = CLAUSE_OPENERS | _words(
    """since today yesterday tomorrow also according many several new said says including
    one two three four five six seven eight nine ten first second third last next percent
    per year years month months week weeks day days time times more most less least well"""
)
"""With the analyzer's stopwords: not salient enough to be relation keywords."""

# Chinese.
CHINESE_SURNAMES = frozenset(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏"
    "吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱"
    "严覃武戴莫孔向汤常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关兰焦俞左柳甘祝包宁"
    "尚符舒阮柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房滕屈饶解牟艾尤阳时"
    "穆农司卓古吉缪简车项连芦麦褚娄窦戚岑景党宫费卜冷晏席卫米柏宗瞿桂全佟应臧闵苟邬边卞姬师和仇栾"
    "隋商刁沙荣巫寇桑郎甄丛仲虞敖巩佘池查麻苑迟邝"
)
"""Common single-character surnames: a jieba person name must start with one."""
CHINESE_COMPOUND_SURNAMES = _words(
    "欧阳 司马 上官 诸葛 东方 皇甫 尉迟 公孙 慕容 令狐 长孙 宇文 司徒 夏侯 轩辕 端木"
)
CHINESE_ORG_SUFFIXES = (
    "股份有限公司",
    "有限责任公司",
    "有限公司",
    "研究所",
    "研究院",
    "研究中心",
    "实验室",
    "大学",
    "学院",
    "公司",
    "集团",
    "银行",
    "协会",
    "学会",
    "基金会",
    "委员会",
    "医院",
    "联盟",
)
"""Words that end organization names; a name is never the suffix alone ("研究所")."""
CHINESE_LEGAL_SUFFIXES = ("股份有限公司", "有限责任公司", "有限公司")
"""Dropped from organization names, as "Inc." would be: 青澜海洋装备有限公司 is 青澜海洋装备."""
CHINESE_ROLES = (
    "所长",
    "总经理",
    "经理",
    "工程师",
    "教授",
    "负责人",
    "报告人",
    "访问人",
    "首席执行官",
    "执行官",
    "副总裁",
    "总裁",
    "主任",
    "院长",
    "校长",
    "董事长",
    "董事",
    "创始人",
    "研究员",
    "研究生",
    "博士",
    "主席",
    "部长",
    "导师",
    "审核",
)
"""Job titles: they end a name that is followed by a person, and mark the person."""
CHINESE_TITLES_AFTER = ("教授", "博士", "先生", "女士", "院士")
NOT_PLACES = _words("海洋 密封 深度 串联 回国 国内 国外 海外 海上 海底 内地 本地 当地 各地 全国 深")
"""Everyday words jieba's dictionary tags as place names (ns)."""
