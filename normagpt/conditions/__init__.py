"""Whether a claim's value is the one its clause gives for the claim's conditions (pure: text
in, verdict out; `verification` asks it of every value a cited clause holds).

A clause or a table often gives several values for several conditions: «не менее 2,7 м в
подрайонах IА, IБ…, а в других подрайонах — не менее 2,5 м»; «400 мм — в направлении,
перпендикулярном к плоскости изгиба; 500 мм — в направлении плоскости изгиба»; a row per
class. A value found anywhere in such a clause may be another condition's value.

The clause is read as a reader reads it (`segments`, `tables`): sentences and list items under
the leads above them («… должны быть не более:», «- в колоннах:»); within a sentence, the part
around each value (the text from the previous value up to it, or after it when the value opens
its part: «400 мм — в направлении …»); a sentence's subject and the unit it names («высота, м,
… равной для основания из щебня – 0,25, песка крупного – 0,3;») hold across its «;» too; a list
item of no value after a value ending its line is that value's condition («… и 50 Н/мм⏎- для
кабелей с медными жилами»); parts that leave their noun to the last take its words («на
постоянных и … на непостоянных рабочих местах»). In a table, the row: its label under its
group's label and the table's heading; under column heads (the heading's lines after the one
naming the unit, one a line, joined, or under a head spanning them: «между выходами» / «в
тупиковой части»; «до 2» / «более 2»), each of a row's last cells with its column's head; a
table laid across (a row of conditions over a row of values, each naming its unit) gives each
value for the cell above it. A part's condition is its words: stems (`words`: not the words of
an answer about norms, not the values), its numbers with their side («до 50 м», «от трех до
семи лет», the ends of a range «от 13 до 46 м»), its grades with theirs («В5 и ниже») and the
Roman numeral an ordinal names («четвертой категории»: IV). What is common to a sentence's
parts is context, not condition: the leads, and the subject before the phrase parallel to a
later part's («Высота жилых комнат» before «в климатических подрайонах …», parallel to «в
других климатических подрайонах»; a predicate joined to that phrase by «и» is no subject,
it shares the part's value: «возвышаться над кровлей и выступать … не менее чем на 15
см»). A first part with nothing of its own is the general case («… не более 1,5 ч, а для
крупных городов — не более 2 ч»), as is a part «в других …» («other cases»). A number
bounding a condition is the condition's, not a value: «в балках высотой 150 мм и более»,
«при перепаде отметок пола более 1,0 м», «не далее 1,5 м от конька» beside a value the
sentence states. A sentence of one value has no subject apart: its words that the clause
says as a subject elsewhere count as a subject's. Values given «соответственно» go one by one
with the lists of numbers after the word (`respective`); in «150 мм — 35 м, 200—450 мм — 50 м»
the value before a dash is the condition of the one after it. A bare number bounded as
the next value is and ending its part takes that value's unit («не менее 1500, а для
битумно-полимерных — не менее 2000 г/м2»); a part of one word opening as the part before
did says that part's other words too: they are the context of both, its word and the one
it contrasts tell them apart («для основных наплавляемых битумных рулонных материалов», «для
битумно-полимерных»).

Tables as the reader left them (`tables`, `table_lines`, `table_heads`, `table_numbered`): rows
opening with a number under a head naming its unit («Наружный диаметр труб, мм» / «15» / «1,5»
/ «2,0»), in groups under numbered labels («1 Жилые, …» / «2000» …); heads as a row of numbers
under the heading («4-5 | 6-10 | 11-16»), over two lines each («I, II, III» / «СО»), in two
levels, broken anyhow but each opening with a capital, or the one run of short lower-case lines;
a table laid across with codes («I» … «VIII» over «Sg, кПа» and its values); a row listing its
conditions, then its cells in the same order; a clause holding its table («20.1 Таблица 20.1»);
OCR's letters for digits («з,о», «П1», «Ш»), a heading repeated overleaf, a dash or a star as
an empty cell. A grade a table gives as a number under its letter («морозостойкости F» /
«75») is read so (`graded`). A negated adjective names the other condition («не защищенной»),
a thickness in bricks is one in millimetres («в полкирпича»: 120 мм), a number of thousands
counts in thousands too («одной тысячи»: 1 of «тыс. чел.»), words a clause abbreviates are the
abbreviation («ориентированно-стружечных плит»: «ОСП»).

A claim's value, read the same way from the claim (`verdict`), is confirmed only by the parts
fitting the claim best: those holding most of the claim's words that tell the parts apart (a
word of a part's condition counts 1, of its context ½; a long word misread by one letter still
counts; a number no part states counts for the parts whose range holds it, «около сорока
метров» for «от 13 до 46 м»; a part whose numbers are not the claim's counts half); among those
near the top, the plain ones (every word of their condition named by the claim but for the
words they share with a narrower part: «в других подрайонах» beside «в подрайонах IА, IБ…»);
when the claim names nothing telling, the part for other cases, if there is one. A value the
best parts do not hold is flagged with the condition it is given for and what is given for the
claim's. Nothing is checked when the clauses give one value of the claim's kind, nor when the
claim's words tell no part apart.
"""

from normagpt.conditions.entities import Segment
from normagpt.conditions.segments import clause_segments
from normagpt.conditions.tables import table_segments
from normagpt.conditions.verdict import Mismatch, class_names, value_condition
from normagpt.conditions.words import GENERIC_WORDS, generic

__all__ = [
    "GENERIC_WORDS",
    "Mismatch",
    "Segment",
    "class_names",
    "clause_segments",
    "generic",
    "table_segments",
    "value_condition",
]
