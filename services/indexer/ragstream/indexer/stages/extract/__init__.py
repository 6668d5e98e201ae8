"""Stage 1, step 6: entities and relations of a chunk, by an LLM or by the offline NLP extractor.

Both extractors implement `Extractor` and return an `ExtractionResult` (stage 2's summaries
are in `stages/summarize.py`).
"""

from ragstream.indexer.stages.extract.llm_extractor import LLMExtractor
from ragstream.indexer.stages.extract.names import clean_name, entity_key, valid_entity_type
from ragstream.indexer.stages.extract.nlp_extractor import NLPExtractor, extract_offline
from ragstream.indexer.stages.extract.parser import (
    ExtractionFormatError,
    ParseResult,
    format_records,
    parse_extraction,
)
from ragstream.indexer.stages.extract.records import (
    ExtractedEntity,
    ExtractedRelation,
    ExtractionResult,
    Extractor,
)

__all__ = [
    "ExtractedEntity",
    "ExtractedRelation",
    "ExtractionFormatError",
    "ExtractionResult",
    "Extractor",
    "LLMExtractor",
    "NLPExtractor",
    "ParseResult",
    "clean_name",
    "entity_key",
    "extract_offline",
    "format_records",
    "parse_extraction",
    "valid_entity_type",
]
