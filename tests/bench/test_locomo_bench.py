"""The LoCoMo retrieval benchmark: parsing and label-noise handling, metrics on a tiny
conversation written here, the CLI's skip message, and loading the real development split
(skipped with a reason when ../shared is absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memvault.benchmarks import locomo
from memvault.entrypoints.cli import main
from tests.conftest import SHARED

LOCOMO = SHARED / "datasets" / "locomo" / "locomo-dev.json"

TINY = [
    {
        "sample_id": "tiny-1",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a greyhound named Zephyr last week."},
                {"speaker": "Bo", "dia_id": "D1:2", "text": "Lovely! I started learning the cello."},
            ],
            "session_2_date_time": "10:37 am on 27 June, 2023",
            "session_2": [
                {
                    "speaker": "Ann",
                    "dia_id": "D2:1",
                    "text": "Zephyr won a race at the county fair.",
                    "blip_caption": "a dog with a ribbon",
                },
                {"speaker": "Bo", "dia_id": "D2:2", "text": "My cello teacher moved to Lisbon."},
            ],
        },
        "qa": [
            {"question": "What is the name of Ann's greyhound?", "evidence": ["D1:1"], "category": 4},
            {"question": "Where did Bo's cello teacher move?", "evidence": ["D2:2; D1:2"], "category": 1},
            {"question": "What did Zephyr win?", "evidence": ["D:2:01"], "category": 5},
            {"question": "Unanswerable", "evidence": ["D"], "category": 3},
            {"question": "No evidence", "evidence": [], "category": 3},
        ],
    }
]


def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    return path


def test_evidence_label_noise_is_normalised() -> None:
    assert locomo.normalize_evidence("D8:6; D9:17") == ["D8:6", "D9:17"]
    assert locomo.normalize_evidence("D:11:26") == ["D11:26"]
    assert locomo.normalize_evidence("D30:05") == ["D30:5"]
    assert locomo.normalize_evidence("D") == []


def test_load_builds_turns_with_session_dates_and_captions(tmp_path: Path) -> None:
    [conv] = locomo.load(tiny(tmp_path))
    assert [t.dia_id for t in conv.turns] == ["D1:1", "D1:2", "D2:1", "D2:2"]
    assert conv.turns[2].content.endswith("[image: a dog with a ribbon]")
    assert conv.turns[0].at.date().isoformat() == "2023-05-08"
    assert [q.evidence for q in conv.questions] == [["D1:1"], ["D1:2", "D2:2"], ["D2:1"]]
    assert conv.skipped_questions == 2 and conv.dropped_evidence == 1


def test_run_scores_every_mode_with_the_documented_keys(tmp_path: Path) -> None:
    result = locomo.run(tiny(tmp_path), ["hashing"], progress=False)
    assert set(result["modes"]) == {"keyword", "vector", "hybrid", "rrf"}
    hybrid = result["modes"]["hybrid"]
    for key in ("recall@5", "recall@10", "any@5", "mrr"):
        assert 0.0 <= hybrid["overall"][key] <= 1.0
    # with four turns, everything is within the top 5
    assert hybrid["overall"]["recall@5"] == 1.0
    # the greyhound question names the memory's own words: keyword ranks it first
    assert result["modes"]["keyword"]["by_category"]["single-hop"]["recall@1"] == 1.0
    assert "adversarial" in hybrid["by_category"]
    assert hybrid["overall_without_adversarial"]["n"] == 2


def test_cli_skips_with_a_clear_message_when_the_dataset_is_absent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["bench", "retrieval", "--dataset", str(tmp_path / "missing.json")])
    assert code == 0
    assert "skipped: dataset" in capsys.readouterr().out


def test_cli_json_output_has_the_issue_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(
        [
            "--json",
            "bench",
            "retrieval",
            "--dataset",
            str(tiny(tmp_path)),
            "--models",
            "hashing",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert {"recall@5", "recall@10", "any@5", "mrr"} <= set(data["modes"]["hybrid"]["overall"])
    assert (tmp_path / "out" / "retrieval.md").read_text().startswith("# Retrieval on LoCoMo")


@pytest.mark.skipif(not LOCOMO.is_file(), reason=f"LoCoMo development split not found at {LOCOMO}")
def test_development_split_loads_with_known_counts() -> None:
    conversations = locomo.load(LOCOMO)
    assert len(conversations) == 5
    assert sum(len(c.turns) for c in conversations) == 2760
    questions = sum(len(c.questions) for c in conversations)
    assert 990 <= questions <= 997
