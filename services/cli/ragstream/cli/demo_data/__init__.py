"""The demo's documents and questions (README.md here describes them), shipped with the
package so that `ragstream demo` runs wherever ragstream is installed."""

from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
QUESTIONS = HERE / "questions.json"
