"""Stage 1, step 6: entities and relations of a chunk, by an LLM or by the offline NLP extractor.

Both extractors implement `Extractor` and return an `ExtractionResult`; the LLM extractor
also summarizes merged descriptions for stage 2.
"""

from ragstream.indexer.stages.extract.llm_extractor import LLMExtractor, SummaryResult
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
    "SummaryResult",
    "clean_name",
    "entity_key",
    "extract_offline",
    "format_records",
    "parse_extraction",
    "valid_entity_type",
]
