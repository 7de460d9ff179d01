"""A LangChain RAG chain with Noema as the retriever. Runs offline: the chat model is a fake that
echoes its prompt, so you can see exactly what the model would receive. Swap in a real chat model
(e.g. ChatOpenAI) to get answers."""

from __future__ import annotations

from pathlib import Path

from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import ParrotFakeChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough

import noema
from noema_langchain import NoemaRetriever

kb = noema.KnowledgeBase()
kb.ingest(sorted((Path(__file__).parent / "docs").glob("*.md")))

retriever = NoemaRetriever(knowledge_base=kb, top_k=3, hops=2, max_tokens=200)
prompt = ChatPromptTemplate.from_template(
    "Answer from these facts (one per line, #n are entity ids):\n{context}\n\nQuestion: {question}"
)


def format_docs(docs: list[Document]) -> str:
    return "\n\n".join(d.page_content for d in docs) or "(no facts found)"


chain = (
    {"context": retriever | format_docs, "question": RunnablePassthrough()}
    | prompt
    | ParrotFakeChatModel()
    | StrOutputParser()
)

if __name__ == "__main__":
    print(chain.invoke("Who founded the company that acquired LinkedIn?"))
